package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/internal/base"
)

// checkpoint is the state of a copy, saved as JSON so that a copy run
// again with the same file goes on where the last one stopped.
type checkpoint struct {
	Src    string                      `json:"src"`
	Dst    string                      `json:"dst"`
	Tables map[string]*tableCheckpoint `json:"tables"`

	path string
	mu   sync.Mutex
}

// tableCheckpoint is one table's progress: every row up to and including
// Last is written at the destination.
type tableCheckpoint struct {
	Started  bool                 `json:"started"`
	Rows     int64                `json:"rows"`
	Last     map[string]jsonValue `json:"last,omitempty"`
	Copied   bool                 `json:"copied"`
	Verified bool                 `json:"verified"`
	Checksum string               `json:"checksum,omitempty"`
	// Feed is where copy --follow is in the source's change feed
	// (follow.go); set, empty, before the bulk copy starts.
	Feed tablekit.FeedPosition `json:"feed,omitempty"`
}

// redactURL is a URL as the checkpoint keeps it and messages show it:
// without user information, fragment, or the value of any query parameter
// whose name looks like a credential (driver.SecretName; no backend takes
// one, so nothing that identifies the store is lost).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(malformed URL)"
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			return driver.ShowURL(u) + "?(malformed query)"
		}
		redacted := false
		for name := range q {
			if base.SecretName(name) {
				q[name], redacted = []string{"REDACTED"}, true
			}
		}
		if redacted {
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}

func loadCheckpoint(path, src, dst string) (*checkpoint, error) {
	cp := &checkpoint{Src: redactURL(src), Dst: redactURL(dst), Tables: map[string]*tableCheckpoint{}, path: path}
	if path == "" {
		return cp, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cp, nil
	}
	if err != nil {
		return nil, err
	}
	var old checkpoint
	if err := json.Unmarshal(b, &old); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %v", path, err)
	}
	if old.Src != cp.Src || old.Dst != cp.Dst {
		return nil, fmt.Errorf("checkpoint %s belongs to the copy of %s to %s, not of %s to %s", path, old.Src, old.Dst, cp.Src, cp.Dst)
	}
	if old.Tables != nil {
		cp.Tables = old.Tables
	}
	return cp, nil
}

// save writes the checkpoint atomically: a new file, synced, renamed over
// the old one.
func (cp *checkpoint) save() error {
	if cp.path == "" {
		return nil
	}
	cp.mu.Lock()
	b, err := json.MarshalIndent(cp, "", "  ")
	cp.mu.Unlock()
	if err != nil {
		return err
	}
	return writeAtomic(cp.path, append(b, '\n'))
}

func (cp *checkpoint) table(name string) *tableCheckpoint {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	t := cp.Tables[name]
	if t == nil {
		t = &tableCheckpoint{}
		cp.Tables[name] = t
	}
	return t
}

// copyConfig is what copy was asked to do.
type copyConfig struct {
	tables         []string // nil: every table of the source
	existing       bool
	verify         bool
	workers, batch int
	maxRate        float64
	quiet          bool
	progress       io.Writer // nil: no progress line
	argv           []string  // the command line, for the resume hint
	follow         bool      // then apply the source's change feed (follow.go)
	catchUp        bool      // follow only until caught up
}

func copyCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	var tables listFlag
	fs.Var(&tables, "table", "a table to copy, repeatable (default: every table)")
	cpPath := fs.String("checkpoint", "", "checkpoint file: a copy run again with it resumes where it stopped")
	verify := fs.Bool("verify", true, "compare every row's checksum at both ends after copying")
	existing := fs.Bool("existing", false, "copy into destination tables that exist already (same key schema): "+existingHelp)
	workers := fs.Int("workers", 4, "concurrent batch writes")
	batchRows := fs.Int("batch", tablekit.MaxBatchWrite, "rows per batch write")
	maxRate := fs.Float64("max-rate", 0, "rows per second at most (default: no limit)")
	quiet := fs.Bool("q", false, "print no summary")
	follow, catchUp := followFlags(fs)
	return func(ctx context.Context, args []string) error {
		cfg := copyConfig{tables: tables, existing: *existing, verify: *verify, workers: *workers,
			batch: *batchRows, maxRate: *maxRate, quiet: *quiet, argv: e.argv, follow: *follow || *catchUp, catchUp: *catchUp}
		if cfg.follow {
			cfg.verify = false // the source changes while it is copied
		}
		if cfg.workers < 1 || cfg.batch < 1 || cfg.batch > tablekit.MaxBatchWrite || cfg.maxRate < 0 {
			return usagef("--workers must be ≥ 1, --batch 1-%d and --max-rate ≥ 0", tablekit.MaxBatchWrite)
		}
		if e.stderrTTY {
			cfg.progress = e.stderr
		}
		cp, err := loadCheckpoint(*cpPath, args[0], args[1])
		if err != nil {
			return err
		}
		src, err := openStore(ctx, args[0], false)
		if err != nil {
			return fmt.Errorf("source: %w", err)
		}
		defer src.Close()
		dst, err := openStore(ctx, args[1], true)
		if err != nil {
			return fmt.Errorf("destination: %w", err)
		}
		defer dst.Close()
		if err := copyTables(ctx, src, dst, cp, cfg, e.stdout); err != nil || !cfg.follow {
			return err
		}
		return followTables(ctx, src, dst, cp, cfg, e.stdout)
	}
}

// copyTables copies cfg's tables (or all) from src to dst.
func copyTables(ctx context.Context, src, dst *tablekit.Client, cp *checkpoint, cfg copyConfig, out io.Writer) error {
	names := cfg.tables
	if names == nil {
		var err error
		if names, err = src.ListTables(ctx); err != nil {
			return fmt.Errorf("source: %w", err)
		}
	}
	for _, name := range names {
		if err := copyTable(ctx, src, dst, name, cp, cfg, out); err != nil {
			return err
		}
	}
	return nil
}

func copyTable(ctx context.Context, src, dst *tablekit.Client, name string, cp *checkpoint, cfg copyConfig, out io.Writer) error {
	tc := cp.table(name)
	if tc.Copied && (tc.Verified || !cfg.verify) {
		if !cfg.quiet {
			fmt.Fprintf(out, "%s: done already (%s, checkpoint %s)\n", name, plural(tc.Rows, "row"), cp.path)
		}
		return nil
	}
	m, err := src.DescribeTable(ctx, name)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	if widened(m.Options) {
		return fmt.Errorf("source: %s; copy would carry them on", widenedHelp(name))
	}
	began := time.Now()
	if !tc.Copied {
		start := fullBound(&m, tablekit.InfMin)
		var resume tablekit.PrimaryKey
		if tc.Last != nil {
			if resume, err = keyFromJSON(&m, tc.Last); err != nil {
				return fmt.Errorf("checkpoint %s, table %q: %v", cp.path, name, err)
			}
			start = resume
		}
		resumed := tc.Started
		if resumed && !cfg.quiet {
			fmt.Fprintf(out, "%s: resuming after %s (checkpoint %s)\n", name, plural(tc.Rows, "row"), cp.path)
		}
		// The source's own feed setting, read before --follow enables one,
		// is carried to a table the copy creates.
		var feed time.Duration
		if st, err := src.Table(name).ChangeFeed(ctx); err == nil && st.Enabled {
			feed = st.Retention
		}
		if cfg.follow && !resumed {
			// The feed's start comes before the first row is read, so
			// nothing written during the copy is missed.
			if err := startFeed(ctx, src, name, tc, cp); err != nil {
				return err
			}
		}
		cp.mu.Lock()
		tc.Started = true
		cp.mu.Unlock()
		if err := cp.save(); err != nil {
			return err
		}
		rows := allRowsFrom(ctx, src, &m, start, resume)
		prog := startProgress(ctx, cfg.progress, src, &m, name, tc.Rows)
		var lastSave time.Time
		base := tc.Rows
		var saveErr error
		final := m.Options
		fo := fillOptions{
			existing: cfg.existing || resumed, final: &final, workers: cfg.workers,
			batchRows: cfg.batch, maxRate: cfg.maxRate, feed: feed,
			note: func(s string) {
				if !cfg.quiet {
					fmt.Fprintln(out, s)
				}
			},
			done: func(last tablekit.PrimaryKey, n int64) {
				cp.mu.Lock()
				tc.Rows = base + n
				tc.Last = keyJSON(last)
				total := tc.Rows
				cp.mu.Unlock()
				prog.set(total)
				if time.Since(lastSave) >= 200*time.Millisecond {
					lastSave = time.Now()
					if err := cp.save(); err != nil && saveErr == nil {
						saveErr = err
					}
				}
			},
		}
		_, err := fillTable(ctx, dst, &m, rows, fo)
		prog.stop()
		if err == nil {
			err = saveErr
		}
		if err != nil {
			if errors.Is(err, tablekit.ErrAlreadyExists) && !resumed {
				// Refused before any row: the same command run again is
				// refused again, not taken for a resumed copy.
				cp.mu.Lock()
				tc.Started = false
				cp.mu.Unlock()
				if serr := cp.save(); serr != nil {
					return serr
				}
				return fmt.Errorf("%w; to go on, run: %s", err, withExisting(cfg.argv))
			}
			cp.save()
			return copyFailed(ctx, name, err, tc.Rows, cp, cfg)
		}
		cp.mu.Lock()
		tc.Copied = true
		cp.mu.Unlock()
		if err := cp.save(); err != nil {
			return err
		}
	}
	if !cfg.verify {
		if !cfg.quiet {
			fmt.Fprintf(out, "%s: %s copied in %v (not verified)\n", name, plural(tc.Rows, "row"), time.Since(began).Round(time.Millisecond))
		}
		return nil
	}
	dm, err := dst.DescribeTable(ctx, name)
	if err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	if dm.Options != m.Options {
		return fmt.Errorf("verifying table %q: the destination's options %+v differ from the source's %+v", name, optionsToJSON(dm.Options), optionsToJSON(m.Options))
	}
	n, sum, err := verifyTable(ctx, src, dst, &m)
	if err != nil {
		return fmt.Errorf("verifying table %q: %w", name, err)
	}
	cp.mu.Lock()
	tc.Verified, tc.Checksum = true, fmt.Sprintf("%016x", sum)
	cp.mu.Unlock()
	if err := cp.save(); err != nil {
		return err
	}
	if !cfg.quiet {
		fmt.Fprintf(out, "%s: %s copied and verified (checksum %016x) in %v\n", name, plural(n, "row"), sum, time.Since(began).Round(time.Millisecond))
	}
	return nil
}

// keyJSON is a key as the checkpoint keeps it.
func keyJSON(k tablekit.PrimaryKey) map[string]jsonValue {
	m := make(map[string]jsonValue, len(k))
	for _, p := range k {
		m[p.Name] = toJSONValue(p.Value)
	}
	return m
}

// allRowsFrom streams every row of m from start, every visible version,
// skipping the row at skip (the last one an interrupted run wrote).
func allRowsFrom(ctx context.Context, db *tablekit.Client, m *tablekit.TableMeta, start, skip tablekit.PrimaryKey) iter.Seq2[tablekit.Row, error] {
	rows := db.Table(m.Name).Rows(ctx, start, fullBound(m, tablekit.InfMax), tablekit.MaxVersions(m.Options.MaxVersions))
	if skip == nil {
		return rows
	}
	return func(yield func(tablekit.Row, error) bool) {
		first := true
		for r, err := range rows {
			if first && err == nil && r.Key.Equal(skip) {
				first = false
				continue
			}
			first = false
			if !yield(r, err) {
				return
			}
		}
	}
}

// verifyTable walks both tables in key order and compares each row's
// checksum (key, and every cell's name, version, type and value). It
// returns the row count and the XOR of the row checksums, or an error that
// names the first rows that are missing, extra or different.
func verifyTable(ctx context.Context, src, dst *tablekit.Client, m *tablekit.TableMeta) (int64, uint64, error) {
	nextS, stopS := iter.Pull2(allRows(ctx, src, m))
	defer stopS()
	nextD, stopD := iter.Pull2(allRows(ctx, dst, m))
	defer stopD()
	var n, bad int64
	var sum uint64
	var problems []string
	note := func(format string, a ...any) {
		bad++
		if len(problems) < 5 {
			problems = append(problems, fmt.Sprintf(format, a...))
		}
	}
	var bufS, bufD []byte
	rs, errS, okS := nextS()
	rd, errD, okD := nextD()
	for okS || okD {
		if errS != nil {
			return n, sum, fmt.Errorf("source: %w", errS)
		}
		if errD != nil {
			return n, sum, fmt.Errorf("destination: %w", errD)
		}
		c := 0
		switch {
		case !okS:
			c = 1
		case !okD:
			c = -1
		default:
			c = tablekit.CompareKeys(rs.Key, rd.Key)
		}
		switch {
		case c < 0:
			note("row %s missing at the destination", formatKey(rs.Key))
			rs, errS, okS = nextS()
		case c > 0:
			note("row %s at the destination is not in the source", formatKey(rd.Key))
			rd, errD, okD = nextD()
		default:
			var a, b uint64
			a, bufS = rowChecksum(&rs, bufS)
			b, bufD = rowChecksum(&rd, bufD)
			if a != b {
				note("row %s differs (checksum %016x at the source, %016x at the destination)", formatKey(rs.Key), a, b)
			}
			n++
			sum ^= a
			rs, errS, okS = nextS()
			rd, errD, okD = nextD()
		}
	}
	if bad > 0 {
		return n, sum, fmt.Errorf("%s: %s", notMatching(bad), strings.Join(problems, "; "))
	}
	return n, sum, nil
}

// notMatching is "1 row does not match", "2 rows do not match".
func notMatching(n int64) string {
	if n == 1 {
		return "1 row does not match"
	}
	return fmt.Sprintf("%d rows do not match", n)
}

// copyFailed is copy's error when writing table name failed or was
// interrupted after rows rows: the destination table's options are set
// back (fillTable), and the message gives the command that goes on.
func copyFailed(ctx context.Context, name string, err error, rows int64, cp *checkpoint, cfg copyConfig) error {
	what := "interrupted"
	if !interrupted(ctx, err) {
		what = fmt.Sprintf("copying table %q: %v", name, err)
		if rows == 0 && cp.path == "" {
			return fmt.Errorf("copying table %q: %w", name, err)
		}
	}
	next := commandLine(cfg.argv)
	if cp.path != "" {
		return fmt.Errorf("%s after %s of table %q (its options at the destination are set back; the checkpoint keeps the place); to go on, run: %s", what, plural(rows, "row"), name, next)
	}
	next = withExisting(cfg.argv)
	return fmt.Errorf("%s after %s of table %q (its options at the destination are set back); without --checkpoint a copy cannot resume: to copy the table again from the start, run: %s (and give --checkpoint FILE to make it resumable)", what, plural(rows, "row"), name, next)
}

// withExisting is the command line argv with --existing (added if absent).
func withExisting(argv []string) string {
	next := commandLine(argv)
	if !slices.Contains(argv, "--existing") && !slices.Contains(argv, "-existing") {
		next += " --existing"
	}
	return next
}
