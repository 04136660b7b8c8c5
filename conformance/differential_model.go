package conformance

// The differential test's bookkeeping: its tables, their key universes
// and the shadow of the versions written to each column of each row,
// kept from the reference's answers only.

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// diffTable is one table of the test with its key universe and the shadow of
// the versions written to each column of each row.
type diffTable struct {
	short   string // name in reports
	name    string
	meta    tablekit.TableMeta // key schema and options kept current
	layouts []keyLayout        // the key schemas the table is created with, in turn
	layout  int                // the current one
	gen     int                // how many times the table changed (options or re-creation)
	keys    []tablekit.PrimaryKey
	bounds  [][]tablekit.Value // per key column: finite values for range bounds
	rows    map[string]map[string]map[int64]bool
}

// keyLayout is a key schema with its universe of keys and range bounds.
type keyLayout struct {
	schema tablekit.KeySchema
	keys   []tablekit.PrimaryKey
	bounds [][]tablekit.Value
}

// setLayout makes layout i the table's key schema.
func (tb *diffTable) setLayout(i int) {
	l := tb.layouts[i]
	tb.layout, tb.meta.Key, tb.keys, tb.bounds = i, l.schema, l.keys, l.bounds
}

// cacheState is what a client's cache holds of a table, as far as the
// generator knows: whether it holds anything, and from which change.
type cacheState struct {
	cached bool
	gen    int
	layout int
}

// synced reports whether client v's cache of tb is current (or empty, so
// that its next use reads the table).
func (d *differ) synced(v int, tb *diffTable) bool {
	c := d.caches[v][tb]
	return !c.cached || c.gen == tb.gen
}

// cached records that client v has just read tb's current description.
func (d *differ) cached(v int, tb *diffTable) {
	d.caches[v][tb] = cacheState{cached: true, gen: tb.gen, layout: tb.layout}
}

var attrColumns = []string{"a", "c", "n", "v"}

// The key layouts of the test's tables.
func stringLayout(name string) keyLayout {
	strKeys := []string{"", "a", "a\x00", "ab", "b", "é", "\U0010ffff"}
	l := keyLayout{schema: tablekit.KeySchema{{Name: name, Type: tablekit.TypeString}}}
	for _, s := range strKeys {
		l.keys = append(l.keys, tablekit.Key(name, tablekit.String(s)))
	}
	l.bounds = [][]tablekit.Value{vals(tablekit.String, append(slices.Clone(strKeys), "aa", "c", "a\x00\x00"))}
	return l
}

func integerLayout(name string) keyLayout {
	ik := []int64{math.MinInt64, -1, 0, 1, math.MaxInt64}
	l := keyLayout{schema: tablekit.KeySchema{{Name: name, Type: tablekit.TypeInteger}}}
	for _, i := range ik {
		l.keys = append(l.keys, tablekit.Key(name, tablekit.Integer(i)))
	}
	l.bounds = [][]tablekit.Value{vals(tablekit.Integer, append(slices.Clone(ik), -2, 2))}
	return l
}

func threeColumnLayout() keyLayout {
	ks := []string{"", "x"}
	ki := []int64{math.MinInt64, 0, math.MaxInt64}
	kb := []string{"", "\x00", "\xff"}
	l := keyLayout{schema: tablekit.KeySchema{
		{Name: "ks", Type: tablekit.TypeString},
		{Name: "ki", Type: tablekit.TypeInteger},
		{Name: "kb", Type: tablekit.TypeBinary},
	}}
	for _, s := range ks {
		for _, i := range ki {
			for _, b := range kb {
				l.keys = append(l.keys, tablekit.Key("ks", tablekit.String(s)).
					Add("ki", tablekit.Integer(i)).Add("kb", tablekit.BinaryString(b)))
			}
		}
	}
	l.bounds = [][]tablekit.Value{
		vals(tablekit.String, append(slices.Clone(ks), "w", "x\x00")),
		vals(tablekit.Integer, append(slices.Clone(ki), -1, 1)),
		vals(tablekit.BinaryString, append(slices.Clone(kb), "\x00\x00", "\xfe")),
	}
	return l
}

// newDiffTables returns the test's tables, each with the key layouts it
// takes in turn when re-created: a layout's successor always has another
// schema, so that a key of one never fits the other.
func newDiffTables(uniq string) []*diffTable {
	out := []*diffTable{
		{short: "t1", layouts: []keyLayout{stringLayout("pk"), integerLayout("pk")},
			meta: tablekit.TableMeta{Options: tablekit.TableOptions{MaxVersions: 2}}},
		{short: "t2", layouts: []keyLayout{threeColumnLayout(), integerLayout("ks")},
			meta: tablekit.TableMeta{Options: tablekit.TableOptions{MaxVersions: 3, TTL: 86400 * time.Second}}},
		{short: "t3", layouts: []keyLayout{integerLayout("id"), stringLayout("id")},
			meta: tablekit.TableMeta{Options: tablekit.TableOptions{MaxVersionOffset: 3600 * time.Second}}},
	}
	for _, tb := range out {
		tb.name = uniq + "_" + tb.short
		tb.meta.Name = tb.name
		tb.setLayout(0)
		tb.meta.Options = resolvedOptions(tb.meta.Options)
		tb.rows = map[string]map[string]map[int64]bool{}
	}
	return out
}

// resolvedOptions is what CreateTable makes of o: zero fields take their
// defaults.
func resolvedOptions(o tablekit.TableOptions) tablekit.TableOptions {
	if o.TTL == 0 {
		o.TTL = tablekit.NoExpiry
	}
	if o.MaxVersions == 0 {
		o.MaxVersions = tablekit.DefaultMaxVersions
	}
	if o.MaxVersionOffset == 0 {
		o.MaxVersionOffset = tablekit.DefaultMaxVersionOffset
	}
	return o
}

func vals[T any](mk func(T) tablekit.Value, xs []T) []tablekit.Value {
	out := make([]tablekit.Value, len(xs))
	for i, x := range xs {
		out[i] = mk(x)
	}
	return out
}

// shadowPut records a successful PutRow: the row holds exactly cols.
func (tb *diffTable) shadowPut(key tablekit.PrimaryKey, cols []tablekit.Column, now int64) {
	row := map[string]map[int64]bool{}
	for _, c := range cols {
		addVersion(row, c.Name, orNow(c.Version, now))
	}
	tb.rows[shortKey(key)] = row
}

// applyChanges records an UpdateRow's changes in a shadow row. incs are
// the increments the reference reported ("n@version=value"), which give
// the versions they were written at; without them an increment counts as
// written at now.
func applyChanges(row map[string]map[int64]bool, changes []tablekit.Change, now int64, incs []string) {
	for _, ch := range changes {
		switch ch.Kind {
		case tablekit.ChangePut:
			addVersion(row, ch.Column, orNow(ch.Version, now))
		case tablekit.ChangeDeleteVersion:
			delete(row[ch.Column], ch.Version)
		case tablekit.ChangeDeleteColumn:
			delete(row, ch.Column)
		case tablekit.ChangeIncrement:
			v := now
			if len(incs) > 0 {
				_, rest, _ := strings.Cut(incs[0], "@")
				at, _, _ := strings.Cut(rest, "=")
				if x, err := strconv.ParseInt(at, 10, 64); err == nil {
					v = x
				}
				incs = incs[1:]
			}
			addVersion(row, ch.Column, v)
		}
	}
}

// shadowUpdate records a successful UpdateRow and its increments.
func (tb *diffTable) shadowUpdate(key tablekit.PrimaryKey, changes []tablekit.Change, now int64, incs []string) {
	k := shortKey(key)
	row := tb.rows[k]
	if row == nil {
		row = map[string]map[int64]bool{}
		tb.rows[k] = row
	}
	applyChanges(row, changes, now, incs)
}

func addVersion(row map[string]map[int64]bool, col string, v int64) {
	if row[col] == nil {
		row[col] = map[int64]bool{}
	}
	row[col][v] = true
}

func orNow(v, now int64) int64 {
	if v == 0 {
		return now
	}
	return v
}

func cloneShadowRow(row map[string]map[int64]bool) map[string]map[int64]bool {
	out := make(map[string]map[int64]bool, len(row))
	for c, vs := range row {
		out[c] = make(map[int64]bool, len(vs))
		for v := range vs {
			out[c][v] = true
		}
	}
	return out
}

// deleteVersionSafe reports whether DeleteVersion(v) on a column whose
// written versions are vs gives the same visible result on an engine that
// trims versions hidden by MaxVersions and on one that keeps them.
func (tb *diffTable) deleteVersionSafe(vs map[int64]bool, v, now int64) bool {
	if !vs[v] {
		return true
	}
	var live []int64
	for x := range vs {
		if rowmodel.CellVisible(tb.meta.Options, x, now) {
			live = append(live, x)
		}
	}
	n := tb.meta.Options.MaxVersions
	if len(live) <= n {
		return true
	}
	slices.Sort(live)
	slices.Reverse(live)
	return !slices.Contains(live[:n], v)
}

// visibleSet returns the versions of vs that opts make visible at now: the
// newest MaxVersions of those the TTL leaves.
func visibleSet(vs map[int64]bool, opts tablekit.TableOptions, now int64) []int64 {
	var live []int64
	for v := range vs {
		if rowmodel.CellVisible(opts, v, now) {
			live = append(live, v)
		}
	}
	slices.Sort(live)
	slices.Reverse(live)
	return live[:min(len(live), opts.MaxVersions)]
}

// uncovers returns the keys of the rows that hold a version hidden under
// the table's options that next would show: changing to next may or may
// not bring it back (SPEC §5), so those rows are deleted first.
func (tb *diffTable) uncovers(next tablekit.TableOptions, now int64) []tablekit.PrimaryKey {
	var out []tablekit.PrimaryKey
	for _, k := range tb.keys {
		row := tb.rows[shortKey(k)]
		for _, vs := range row {
			before := visibleSet(vs, tb.meta.Options, now)
			if slices.ContainsFunc(visibleSet(vs, next, now), func(v int64) bool { return !slices.Contains(before, v) }) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}
