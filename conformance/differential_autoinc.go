package conformance

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit"
)

// Auto-increment keys in the differential test (SPEC §14). When both
// sides claim them, the test has one more table, (p String, s Integer
// auto-increment), and its mix writes rows there with AutoIncrement (puts,
// updates, batch and atomic writes) and reads, updates and deletes them
// by the key each side assigned. The two sides may assign different
// values (SPEC leaves them open), so each row has a logical id, the index
// of the write that made it, and every outcome shows a key by that id;
// each side checks that the keys it is given are the request's with a
// value above every one it gave before in that partition key (distinct
// within a call, whose writes may apply in any order), and a scan of a
// partition key is compared row for row, by id. The ops replace some
// reads, so a backend without auto-increment runs the same sequence as
// before.

// diffAutoInc is the auto-increment table's state.
type diffAutoInc struct {
	name string
	ids  map[string][]int // partition key -> ids of its rows, per the reference
	next int              // the next logical id
	// per side: logical id -> the key it assigned, the reverse, and the
	// greatest value assigned per partition key.
	keys map[*side]map[int]tablekit.PrimaryKey
	id   map[*side]map[string]int
	last map[*side]map[string]int64
}

var aiPartitions = []string{"a", "b"}

var diffAISchema = tablekit.KeySchema{
	{Name: "p", Type: tablekit.TypeString},
	{Name: "s", Type: tablekit.TypeInteger, AutoIncrement: true},
}

// setupAutoInc creates the auto-increment table on both sides when both
// claim auto-increment keys; cleanup deletes the backend's.
func (d *differ) setupAutoInc(ctx context.Context, uniq string) (cleanup func(), err error) {
	ref, sut := d.ref.clients[0], d.sut.clients[0]
	if !ref.Capabilities().AutoIncrement || !sut.Capabilities().AutoIncrement {
		return func() {}, nil
	}
	ai := &diffAutoInc{name: uniq + "_ai", ids: map[string][]int{},
		keys: map[*side]map[int]tablekit.PrimaryKey{}, id: map[*side]map[string]int{}, last: map[*side]map[string]int64{}}
	for _, s := range []*side{d.ref, d.sut} {
		ai.keys[s], ai.id[s], ai.last[s] = map[int]tablekit.PrimaryKey{}, map[string]int{}, map[string]int64{}
	}
	meta := tablekit.TableMeta{Name: ai.name, Key: diffAISchema}
	if err := ref.CreateTable(ctx, meta); err != nil {
		return nil, fmt.Errorf("differential: CreateTable %s on the reference: %w", ai.name, err)
	}
	if err := sut.CreateTable(ctx, meta); err != nil {
		return nil, fmt.Errorf("differential: CreateTable %s (auto-increment) on the backend: %w", ai.name, err)
	}
	d.ai = ai
	return func() {
		if err := sut.DeleteTable(context.WithoutCancel(ctx), ai.name); err != nil {
			d.t.Logf("differential: cleanup: DeleteTable %s: %v", ai.name, err)
		}
	}, nil
}

func aiPlaceholder(p string) tablekit.PrimaryKey {
	return tablekit.Key("p", tablekit.String(p)).Add("s", tablekit.AutoIncrement)
}

// genAutoInc is the next auto-increment operation.
func (d *differ) genAutoInc() operation {
	ai := d.ai
	p := pick(d, aiPartitions)
	var existing []int
	for _, q := range aiPartitions {
		existing = append(existing, ai.ids[q]...)
	}
	switch r := d.intn(100); {
	case r < 45 || len(existing) == 0:
		o := &aiWriteOp{ai: ai, now: d.now()}
		switch r := d.intn(10); {
		case r < 4:
			o.mode = "PutRow"
		case r < 6:
			o.mode = "UpdateRow"
		case r < 8 || !d.atomic:
			o.mode = "BatchWriteRow"
		default:
			o.mode = "AtomicWrite"
		}
		n := 1
		if o.mode == "BatchWriteRow" || o.mode == "AtomicWrite" {
			n = 1 + d.intn(3)
		}
		for range n {
			w := aiWrite{p: p, id: ai.next}
			ai.next++
			if o.mode == "BatchWriteRow" && d.chance(0.3) {
				w.p = pick(d, aiPartitions)
			}
			if d.chance(0.15) {
				w.cond = pick(d, []tablekit.RowExistence{tablekit.ExpectExist, tablekit.ExpectNotExist})
			}
			if o.mode == "UpdateRow" || (o.mode != "PutRow" && d.chance(0.4)) {
				w.changes = []tablekit.Change{tablekit.Put("v", d.anyValue()), tablekit.Increment("n", 1+int64(d.intn(3)))}
			} else {
				w.cols = []tablekit.Column{{Name: "v", Value: d.anyValue()}}
			}
			o.writes = append(o.writes, w)
		}
		return o
	case r < 70:
		return &aiGetOp{ai: ai, id: pick(d, existing)}
	case r < 85:
		return &aiScanOp{ai: ai, p: p}
	case r < 95:
		return &aiUpdateOp{ai: ai, id: pick(d, existing), change: tablekit.Increment("n", 1)}
	default:
		return &aiDeleteOp{ai: ai, id: pick(d, existing)}
	}
}

// aiWrite is one write with AutoIncrement: a put (cols) or an update.
type aiWrite struct {
	p       string
	id      int
	cols    []tablekit.Column
	changes []tablekit.Change
	cond    tablekit.RowExistence
}

func (w aiWrite) batchWrite(table string) tablekit.BatchWrite {
	if w.changes != nil {
		return tablekit.BatchUpdate(table, aiPlaceholder(w.p), w.changes, w.cond)
	}
	return tablekit.BatchPut(table, aiPlaceholder(w.p), w.cols, w.cond)
}

func (w aiWrite) String() string {
	s := fmt.Sprintf("#%d (p=%s, s=AutoIncrement) ", w.id, w.p)
	if w.changes != nil {
		s += fmtChanges(w.changes)
	} else {
		s += fmtPutCols(w.cols)
	}
	if w.cond != tablekit.Ignore {
		s += " if " + w.cond.String()
	}
	return s
}

type aiWriteOp struct {
	through
	ai     *diffAutoInc
	mode   string
	writes []aiWrite
	now    int64
}

func (o *aiWriteOp) String() string {
	parts := make([]string, len(o.writes))
	for i, w := range o.writes {
		parts[i] = w.String()
	}
	return fmt.Sprintf("%s ai [%s]", o.mode, strings.Join(parts, "; "))
}

// aiWriteOutcome is each write's outcome and what its key showed.
type aiWriteOutcome struct {
	Err     diffErr
	Results []writeOutcome
	Keys    []string
}

func (o *aiWriteOp) run(ctx context.Context, s *side) any {
	out := aiWriteOutcome{}
	var keys []tablekit.PrimaryKey
	errs := make([]error, len(o.writes))
	tab := s.cl().Table(o.ai.name)
	switch o.mode {
	case "PutRow":
		var k tablekit.PrimaryKey
		w := o.writes[0]
		errs[0] = tab.PutRow(ctx, aiPlaceholder(w.p), w.cols, w.cond, tablekit.ReturnKey(&k))
		keys = append(keys, k)
		out.Results = append(out.Results, writeOutcome{Err: outcomeErr(errs[0])})
	case "UpdateRow":
		w := o.writes[0]
		res, err := tab.UpdateRow(ctx, aiPlaceholder(w.p), w.changes, w.cond)
		errs[0] = err
		keys = append(keys, res.Key)
		out.Results = append(out.Results, writeOutcome{Err: outcomeErr(err), Increments: outcomeCells(res.Increments)})
	default:
		ws := make([]tablekit.BatchWrite, len(o.writes))
		for i, w := range o.writes {
			ws[i] = w.batchWrite(o.ai.name)
		}
		var res []tablekit.BatchWriteResult
		var err error
		if o.mode == "AtomicWrite" {
			res, err = tab.AtomicWrite(ctx, ws)
		} else {
			res, err = s.cl().BatchWriteRow(ctx, ws)
		}
		out.Err = outcomeErr(err)
		for i, r := range res {
			errs[i] = r.Err
			keys = append(keys, r.Key)
			out.Results = append(out.Results, writeOutcome{Err: outcomeErr(r.Err), Increments: outcomeCells(r.Increments)})
		}
		if err != nil {
			return out
		}
	}
	// The writes of one call may be applied in any order: each value must
	// be above every one given before the call, and distinct.
	before := maps.Clone(o.ai.last[s])
	seen := map[string]bool{}
	for i, w := range o.writes {
		if errs[i] != nil {
			out.Keys = append(out.Keys, "-")
			continue
		}
		out.Keys = append(out.Keys, o.ai.took(s, w, keys[i], before[w.p], seen))
	}
	return out
}

// took checks the key side s gave write w (of a call before which the
// greatest value of its partition key was last; seen holds the keys given
// in the call) and records it: "#id", or what is wrong with it.
func (ai *diffAutoInc) took(s *side, w aiWrite, k tablekit.PrimaryKey, last int64, seen map[string]bool) string {
	var v tablekit.Value
	if len(k) == 2 {
		v = k[1].Value
	}
	n, ok := v.Int()
	switch {
	case !ok || k.AutoIncrementIndex() >= 0 || !k.Equal(aiPlaceholder(w.p).WithAutoIncrement(n)):
		return fmt.Sprintf("key %s is not (p=%s, s=<Integer>)", shortKey(k), w.p)
	case n <= last:
		return fmt.Sprintf("s=%d is not above %d, given before in p=%s", n, last, w.p)
	case seen[shortKey(k)]:
		return fmt.Sprintf("s=%d was given twice in one call", n)
	}
	seen[shortKey(k)] = true
	ai.last[s][w.p] = max(ai.last[s][w.p], n)
	ai.keys[s][w.id] = k
	ai.id[s][shortKey(k)] = w.id
	return fmt.Sprintf("#%d", w.id)
}

func (o *aiWriteOp) observe(d *differ, ref any) {
	out := ref.(aiWriteOutcome)
	for i, k := range out.Keys {
		if strings.HasPrefix(k, "#") {
			w := o.writes[i]
			d.ai.ids[w.p] = append(d.ai.ids[w.p], w.id)
		}
	}
}

// aiRow is a row's outcome with its key shown by id.
func (ai *diffAutoInc) aiRow(s *side, r tablekit.Row) rowOutcome {
	out := outcomeRow(r)
	if id, ok := ai.id[s][out.Key]; ok {
		out.Key = "#" + strconv.Itoa(id)
	}
	return out
}

type aiGetOp struct {
	through
	ai *diffAutoInc
	id int
}

func (o *aiGetOp) String() string { return fmt.Sprintf("GetRow ai #%d", o.id) }

func (o *aiGetOp) run(ctx context.Context, s *side) any {
	r, found, err := s.cl().Table(o.ai.name).GetRow(ctx, o.ai.keys[s][o.id])
	out := readOutcome{Err: outcomeErr(err), Found: found}
	if found {
		out.Row = o.ai.aiRow(s, r)
	}
	return out
}

type aiScanOp struct {
	through
	ai *diffAutoInc
	p  string
}

func (o *aiScanOp) String() string { return fmt.Sprintf("PrefixRows ai (p=%s)", o.p) }

func (o *aiScanOp) run(ctx context.Context, s *side) any {
	var out rowsOutcome
	for r, err := range s.cl().Table(o.ai.name).PrefixRows(ctx, tablekit.Key("p", tablekit.String(o.p)), tablekit.PageSize(3)) {
		if err != nil {
			out.Err = outcomeErr(err)
			break
		}
		out.Rows = append(out.Rows, o.ai.aiRow(s, r))
	}
	// Rows made by one call may be in either order: compare them by id.
	slices.SortStableFunc(out.Rows, func(a, b rowOutcome) int { return cmp.Compare(aiOrder(a.Key), aiOrder(b.Key)) })
	return out
}

// aiOrder is the id of a row shown as "#id" (others last).
func aiOrder(key string) int {
	if id, err := strconv.Atoi(strings.TrimPrefix(key, "#")); err == nil {
		return id
	}
	return math.MaxInt
}

type aiUpdateOp struct {
	through
	ai     *diffAutoInc
	id     int
	change tablekit.Change
}

func (o *aiUpdateOp) String() string { return fmt.Sprintf("UpdateRow ai #%d %s", o.id, o.change) }

func (o *aiUpdateOp) run(ctx context.Context, s *side) any {
	res, err := s.cl().Table(o.ai.name).UpdateRow(ctx, o.ai.keys[s][o.id], []tablekit.Change{o.change}, tablekit.ExpectExist)
	out := writeOutcome{Err: outcomeErr(err), Increments: outcomeCells(res.Increments)}
	if err == nil && res.Key != nil {
		out.Increments = append(out.Increments, "unexpected key "+shortKey(res.Key))
	}
	return out
}

type aiDeleteOp struct {
	through
	ai *diffAutoInc
	id int
}

func (o *aiDeleteOp) String() string { return fmt.Sprintf("DeleteRow ai #%d", o.id) }

func (o *aiDeleteOp) run(ctx context.Context, s *side) any {
	return writeOutcome{Err: outcomeErr(s.cl().Table(o.ai.name).DeleteRow(ctx, o.ai.keys[s][o.id], tablekit.ExpectExist))}
}

func (o *aiDeleteOp) observe(d *differ, ref any) {
	if ref.(writeOutcome).Err.Class == "" {
		for p, ids := range d.ai.ids {
			for i, id := range ids {
				if id == o.id {
					d.ai.ids[p] = append(ids[:i:i], ids[i+1:]...)
					break
				}
			}
		}
	}
}

// finalAutoInc compares both partition keys of the auto-increment table
// whole, once the sequence has run.
func (d *differ) finalAutoInc(ctx context.Context) error {
	if d.ai == nil {
		return nil
	}
	for i, p := range aiPartitions {
		if err := d.step(ctx, d.ops+len(d.tables)*3+i, &aiScanOp{ai: d.ai, p: p}); err != nil {
			return err
		}
	}
	return nil
}
