package conformance

// The differential test: one seeded sequence of operations runs on the
// reference (package conformance/internal/oracle: a sorted slice of rows
// under one mutex, every row rule rowmodel's, written to be obviously
// correct, never to be fast) and on the backend under test, both behind a
// tablekit.Client and both reading one *tablekit.ManualClock, and every
// answer is compared. The reference is not package localengine: that is
// the fast engine, and it is checked here like every other backend (a bug
// planted in its span code is caught: localengine's TestSpanMutantCaught).
//
// What is compared: rows (keys, columns, versions, typed values), found
// flags, increments, range pages (their rows and whether a resume token came
// back), and errors by their portable class only (errors.Is against each
// tablekit sentinel), never by message.
//
// Reproducibility: the generator is a PCG seeded from the seed; it decides
// the next operation from the seed and from the reference's earlier answers
// only (never the backend's), so a seed and an operation count replay the
// same sequence on any backend: TABLEKIT_DIFF_SEED=s TABLEKIT_DIFF_OPS=n.
//
// Each side has two clients: the first over the backend the Harness made,
// the second over a second backend on the same store (Harness.ShareBackend,
// or NewBackend again; on the reference, the same engine), each with a
// metadata cache of its own that never expires. Every operation goes
// through one of them, the same one on both sides. Between writes the
// sequence changes the tables as other processes would: UpdateTable raises
// and lowers MaxVersions and TTL, a table is dropped and created again with
// another key schema, and the clock jumps by milliseconds to days.
//
// Where SPEC leaves behaviour open the generator steers clear, so that a
// divergence is always a real one:
//   - Raising MaxVersions or TTL may or may not bring back versions hidden
//     before (SPEC §5). Before a raise the test deletes (on both sides) the
//     rows whose shadow holds a hidden version the new options would show.
//   - Versions hidden by MaxVersions are physically trimmed by the local
//     engine at its next write of the row but may be kept by a lazy backend
//     (Bigtable GC). Deleting a *visible* version of such a column with
//     DeleteVersion could then uncover a hidden one on one side only. The
//     generator keeps a shadow of every version written to each column since
//     it was last cleared and never deletes one of the newest MaxVersions
//     live versions of a column that holds more than MaxVersions live ones.
//     Expiry is harmless: an older version always expires first.
//   - A client whose cache is stale (the other client changed or re-created
//     the table since it last read it) reads with the options it has,
//     which SPEC allows to differ from the store's. Such a client only
//     writes, and only what SPEC decides whatever the client knows (a
//     PutRow of one current version per column, an UpdateRow that puts
//     columns the row lacks, a DeleteRow; after a re-creation, a key of the
//     old shape, which must be refused); then it reads the table's
//     description again, which brings both sides' caches up to date.
//   - A batch write never names one row twice (the same-row order of a
//     batch has a case of its own).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance/internal/oracle"
)

// Defaults of the differential test. The seed is fixed so that a run is
// reproducible; see [DifferentialOptions] for the environment overrides.
const (
	DefaultDifferentialSeed int64 = 20250301
	DefaultDifferentialOps  int   = 500
)

// DifferentialOptions configure [RunDifferentialWith]. A zero field takes
// its default. The environment variables TABLEKIT_DIFF_SEED (an integer, or
// "random" for a fresh seed that is logged) and TABLEKIT_DIFF_OPS override
// both, so that a reported failure replays, or other sequences are explored,
// without editing code.
type DifferentialOptions struct {
	// Seed of the operation sequence.
	Seed int64
	// Ops is how many operations to run (a page of a range read, a clock
	// advance and a batch each count as one).
	Ops int

	ignoreEnv bool // for the package's own tests of the checker
}

// RunDifferential runs a seeded random sequence of operations on the
// reference and on h's backend (through two clients, the second over a second
// backend on the same store: see [SharedStore]) and stops at the first
// answer that differs, reporting the seed, the operation's index, the
// operation and the diff.
func RunDifferential(t *testing.T, h Harness) {
	t.Helper()
	RunDifferentialWith(t, h, DifferentialOptions{})
}

// RunDifferentialWith is [RunDifferential] with options.
func RunDifferentialWith(t *testing.T, h Harness, o DifferentialOptions) {
	t.Helper()
	if rep := runDifferential(t, h, o); rep.Err != nil {
		t.Fatal(rep.Err)
	}
}

// diffReport is what one differential run found.
type diffReport struct {
	Seed  int64
	Ops   int      // operations requested
	Ran   int      // operations run (the failing one included)
	Trace []string // every operation with the reference's answer
	Err   error    // the divergence or setup failure; nil when none
}

func resolveDiffOptions(o DifferentialOptions) (seed int64, ops int, err error) {
	seed, ops = o.Seed, o.Ops
	if seed == 0 {
		seed = DefaultDifferentialSeed
	}
	if ops == 0 {
		ops = DefaultDifferentialOps
	}
	if o.ignoreEnv {
		return seed, ops, nil
	}
	if s := os.Getenv("TABLEKIT_DIFF_SEED"); s != "" {
		if s == "random" {
			seed = time.Now().UnixNano()
		} else if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("differential: TABLEKIT_DIFF_SEED=%q is not an integer or \"random\"", s)
		}
	}
	if s := os.Getenv("TABLEKIT_DIFF_OPS"); s != "" {
		if ops, err = strconv.Atoi(s); err != nil || ops < 1 {
			return 0, 0, fmt.Errorf("differential: TABLEKIT_DIFF_OPS=%q is not a positive integer", s)
		}
	}
	return seed, ops, nil
}

// diffEpoch is where the shared clock starts; the 250 ms put second
// boundaries (SPEC §5 compares seconds) in reach of small advances.
var diffEpoch = time.Date(2025, 3, 1, 12, 0, 0, 250e6, time.UTC)

// diffTableSeq makes table names unique within the process; the time part
// makes them unique across runs against a shared emulator.
var diffTableSeq atomic.Int64

// runDifferential does the work of RunDifferentialWith and returns what it
// found instead of failing t, so that the package's own tests can prove it
// detects a broken backend. t is used for logging, the harness and the
// artifact directory.
func runDifferential(t testing.TB, h Harness, o DifferentialOptions) (rep diffReport) {
	t.Helper()
	seed, ops, err := resolveDiffOptions(o)
	if err != nil {
		rep.Err = err
		return rep
	}
	rep.Seed, rep.Ops = seed, ops
	t.Logf("differential: seed %d, %d operations (TABLEKIT_DIFF_SEED / TABLEKIT_DIFF_OPS override)", seed, ops)
	ctx := t.Context()

	clock := tablekit.NewManualClock(diffEpoch)
	eng := oracle.New()
	ref := tablekit.NewClient(eng, tablekit.WithClock(clock), tablekit.WithMetaCacheTTL(0))
	defer ref.Close()
	ref2 := tablekit.NewClient(sharedEngine{eng}, tablekit.WithClock(clock), tablekit.WithMetaCacheTTL(0))
	defer ref2.Close()
	b, err := h.NewBackend(ctx, t, clock)
	if err != nil {
		rep.Err = fmt.Errorf("differential: harness: NewBackend: %w", err)
		return rep
	}
	sut := tablekit.NewClient(b, tablekit.WithClock(clock), tablekit.WithMetaCacheTTL(0))
	defer sut.Close()
	b2, err := shareBackend(ctx, t, h, clock, b)
	if err != nil {
		rep.Err = fmt.Errorf("differential: harness: a second backend on the store: %w", err)
		return rep
	}
	sut2 := tablekit.NewClient(b2, tablekit.WithClock(clock), tablekit.WithMetaCacheTTL(0))
	defer sut2.Close()

	d := &differ{
		t:      t,
		rng:    rand.New(rand.NewPCG(uint64(seed), 0x7ab1e_d1ff)),
		clock:  clock,
		ref:    &side{clients: [2]*tablekit.Client{ref, ref2}, tokens: map[int][]byte{}},
		sut:    &side{clients: [2]*tablekit.Client{sut, sut2}, tokens: map[int][]byte{}},
		stats:  map[string]int{},
		errs:   map[string]int{},
		caches: [2]map[*diffTable]cacheState{{}, {}},
		seed:   seed,
		ops:    ops,
	}
	d.atomic = ref.Capabilities().AtomicWrite && sut.Capabilities().AtomicWrite
	uniq := "diff_" + strconv.FormatInt(time.Now().UnixNano(), 36) + strconv.FormatInt(diffTableSeq.Add(1), 36)
	d.tables = newDiffTables(uniq)
	d.missing = uniq + "_missing"
	for _, tb := range d.tables {
		if err := ref.CreateTable(ctx, tb.meta); err != nil {
			rep.Err = fmt.Errorf("differential: CreateTable %s on the reference: %w", tb.name, err)
			return rep
		}
		if err := sut.CreateTable(ctx, tb.meta); err != nil {
			rep.Err = fmt.Errorf("differential: CreateTable %s on the backend: %w", tb.name, err)
			return rep
		}
		defer func() {
			if err := sut.DeleteTable(context.WithoutCancel(ctx), tb.name); err != nil {
				t.Logf("differential: cleanup: DeleteTable %s: %v", tb.name, err)
			}
		}()
		if err := errors.Join(enableFeed(ctx, ref, tb.name), enableFeed(ctx, sut, tb.name)); err != nil {
			rep.Err = fmt.Errorf("differential: enabling the change feed of %s: %w", tb.name, err)
			return rep
		}
	}
	cleanupAI, err := d.setupAutoInc(ctx, uniq)
	if err != nil {
		rep.Err = err
		return rep
	}
	defer cleanupAI()
	if _, err := sut2.DescribeTable(ctx, d.tables[0].name); err != nil {
		rep.Err = fmt.Errorf("differential: the second backend cannot describe table %s, which the first created: %w\n%s", d.tables[0].name, err, notSharedHelp)
		return rep
	}
	start := time.Now()
	rep.Err = d.run(ctx)
	if rep.Err == nil {
		rep.Err = d.finalAutoInc(ctx)
	}
	if rep.Err == nil {
		rep.Err = d.compareFeeds(ctx, tablekit.CapabilitiesOf(b).ChangeFeed) // differential_feed.go
	}
	rep.Ran = min(len(d.trace), ops)
	rep.Trace = d.trace
	if rep.Err == nil {
		t.Logf("differential: %d operations agree in %v; %s", ops, time.Since(start).Round(time.Millisecond), d.summary())
	}
	return rep
}

// side is the reference or the backend under test: its two clients (over
// two backends on one store) and its per-side state.
type side struct {
	clients [2]*tablekit.Client
	via     int            // the client of the operation being run
	tokens  map[int][]byte // resume token of each open range cursor
}

// cl is the client the current operation goes through.
func (s *side) cl() *tablekit.Client { return s.clients[s.via] }

// sharedEngine is the reference as a second process sees it: the same
// store, and a Close that leaves it to its owner.
type sharedEngine struct{ *oracle.Store }

// Close leaves the store open for the first client.
func (sharedEngine) Close() error { return nil }

// routed is an operation that goes through one client of each side.
type routed interface {
	client() int
	setClient(v int)
}

// through is embedded in the operations that go through a client: which
// one (0 or 1).
type through struct{ via int }

func (t *through) client() int     { return t.via }
func (t *through) setClient(v int) { t.via = v }

// viaLabel marks the operations of the second client in the trace.
func viaLabel(v int) string {
	if v == 1 {
		return "[client 2] "
	}
	return ""
}

// differ generates and runs the sequence.
type differ struct {
	t        testing.TB
	rng      *rand.Rand
	clock    *tablekit.ManualClock
	ref, sut *side
	tables   []*diffTable
	caches   [2]map[*diffTable]cacheState // what each client's cache holds, as far as the generator knows
	missing  string                       // a table that does not exist
	pool     []int64
	cursor   *cursorState
	nextID   int
	trace    []string
	stats    map[string]int
	errs     map[string]int
	seed     int64
	ops      int
	atomic   bool         // both sides have atomic writes: the mix has them (differential_atomic.go)
	ai       *diffAutoInc // both sides have auto-increment keys (differential_autoinc.go); else nil
}

type cursorState struct {
	op   *rangeOp
	page int
}

// operation is one operation of the sequence.
type operation interface {
	// String describes the operation for the report.
	String() string
	// run executes the operation through one side's client and returns its
	// comparable outcome.
	run(ctx context.Context, s *side) any
}

// observer is an operation that updates the generator's state from the
// reference's outcome.
type observer interface {
	observe(d *differ, ref any)
}

// globalOp is an operation that acts once for both sides (the clock).
type globalOp interface {
	apply(d *differ)
}

func (d *differ) now() int64 { return d.clock.Now().UnixMilli() }

func (d *differ) run(ctx context.Context) error {
	for i := 0; i < d.ops; i++ {
		if err := d.step(ctx, i, d.next()); err != nil {
			return err
		}
	}
	// Bring every client's cache up to date, then read every table whole,
	// all visible versions, in small pages: this catches a difference in a
	// row that was written but never read again.
	n := d.ops
	for _, tb := range d.tables {
		for v := range 2 {
			if !d.synced(v, tb) {
				if err := d.step(ctx, n, &syncOp{through: through{v}, tb: tb}); err != nil {
					return err
				}
				n++
			}
		}
	}
	for k, tb := range d.tables {
		op := &rowsOp{tb: tb, pageSize: 2, spec: readSpec{maxVer: 5}, final: true}
		for _, kc := range tb.meta.Key {
			op.start = op.start.Add(kc.Name, tablekit.InfMin)
			op.end = op.end.Add(kc.Name, tablekit.InfMax)
		}
		if err := d.step(ctx, n+k, op); err != nil {
			return err
		}
	}
	return nil
}

// step runs operation #i on both sides and compares the answers.
func (d *differ) step(ctx context.Context, i int, op operation) error {
	d.stats[opName(op)]++
	at := d.clock.Now().Sub(diffEpoch)
	if g, ok := op.(globalOp); ok {
		g.apply(d)
		d.trace = append(d.trace, fmt.Sprintf("#%d [+%v] %s", i, at, op))
		return nil
	}
	via := 0
	if r, ok := op.(routed); ok {
		via = r.client()
	}
	d.ref.via, d.sut.via = via, via
	opCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	refOut := op.run(opCtx, d.ref)
	sutOut := op.run(opCtx, d.sut)
	cancel()
	d.trace = append(d.trace, fmt.Sprintf("#%d [+%v] %s%s\n      => %s", i, at, viaLabel(via), op, brief(refOut)))
	countErrs(d.errs, refOut)
	if diff := cmp.Diff(refOut, sutOut, outcomeCmpOptions()...); diff != "" {
		return d.divergence(i, op, at, diff)
	}
	if ob, ok := op.(observer); ok {
		ob.observe(d, refOut)
	}
	for _, tb := range opTables(op) { // the op's client read what it did not cache
		if d.synced(via, tb) {
			d.cached(via, tb)
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("differential: stopped after op #%d: %w", i, err)
	}
	return nil
}

// divergence formats the report of a differing answer.
func (d *differ) divergence(i int, op operation, at time.Duration, diff string) error {
	var b strings.Builder
	if i < d.ops {
		fmt.Fprintf(&b, "differential: the backend diverges from the reference at op #%d of %d (seed %d)\n", i, d.ops, d.seed)
	} else {
		fmt.Fprintf(&b, "differential: the backend diverges from the reference in the final scan of every table, after %d ops (seed %d)\n", d.ops, d.seed)
	}
	fmt.Fprintf(&b, "op #%d [clock epoch+%v, now=%d ms]: %s%s\n", i, at, d.now(), viaLabel(d.ref.via), op)
	fmt.Fprintf(&b, "diff (-reference +backend):\n%s", diff)
	first := max(0, len(d.trace)-1-12)
	fmt.Fprintf(&b, "preceding ops with the reference's answers (%d of %d):\n", len(d.trace)-1-first, len(d.trace)-1)
	for _, line := range d.trace[first : len(d.trace)-1] {
		b.WriteString("  " + line + "\n")
	}
	if dir := d.t.ArtifactDir(); dir != "" {
		path := filepath.Join(dir, fmt.Sprintf("differential-seed%d.trace", d.seed))
		if err := os.WriteFile(path, []byte(strings.Join(d.trace, "\n")+"\n"), 0o644); err == nil {
			fmt.Fprintf(&b, "full trace: %s (kept with go test -artifacts)\n", path)
		}
	}
	fmt.Fprintf(&b, "reproduce (in the test's package directory): TABLEKIT_DIFF_SEED=%d TABLEKIT_DIFF_OPS=%d go test -run '%s' .", d.seed, min(i+1, d.ops), runPattern(d.t.Name()))
	return errors.New(b.String())
}

func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

func (d *differ) summary() string {
	kinds := make([]string, 0, len(d.stats))
	for k := range d.stats {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	b.WriteString("ops:")
	for _, k := range kinds {
		fmt.Fprintf(&b, " %s=%d", k, d.stats[k])
	}
	classes := make([]string, 0, len(d.errs))
	for k := range d.errs {
		classes = append(classes, k)
	}
	sort.Strings(classes)
	b.WriteString("; errors seen:")
	for _, k := range classes {
		fmt.Fprintf(&b, " %s=%d", k, d.errs[k])
	}
	return b.String()
}

func opName(op operation) string {
	if bw, ok := op.(*batchWriteOp); ok && bw.atomic {
		return "atomicWrite"
	}
	s := fmt.Sprintf("%T", op)
	s = strings.TrimPrefix(s, "*conformance.")
	return strings.TrimSuffix(s, "Op")
}
