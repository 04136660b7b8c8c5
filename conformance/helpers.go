package conformance

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	gocmp "github.com/google/go-cmp/cmp"
	tk "github.com/tablekit/tablekit"
)

// Common key schemas: one String or one Integer column named "pk".
var (
	schemaS = tk.KeySchema{{Name: "pk", Type: tk.TypeString}}
	schemaI = tk.KeySchema{{Name: "pk", Type: tk.TypeInteger}}
)

func strKey(s string) tk.PrimaryKey { return tk.Key("pk", tk.String(s)) }
func intKey(i int64) tk.PrimaryKey  { return tk.Key("pk", tk.Integer(i)) }

// col is a cell to write or expect; version 0 means "the clock's now" when
// written (and when resolved by env.want).
func col(name string, v tk.Value, version int64) tk.Column {
	return tk.Column{Name: name, Value: v, Version: version}
}

// row is a row to write: a key and its cells.
func row(key tk.PrimaryKey, cols ...tk.Column) tk.Row { return tk.Row{Key: key, Columns: cols} }

// ---- exact, readable views of rows, for go-cmp ----

// fmtValue formats a value exactly: its type and its full contents, so that
// two views are equal iff the values are (Integer(7) != Double(7)).
func fmtValue(v tk.Value) string {
	switch v.Type() {
	case tk.TypeString:
		s, _ := v.Str()
		if len(s) > 96 {
			return fmt.Sprintf("String(%d bytes, sha256 %x)", len(s), sha256.Sum256([]byte(s)))
		}
		return "String(" + strconv.Quote(s) + ")"
	case tk.TypeInteger:
		i, _ := v.Int()
		return "Integer(" + strconv.FormatInt(i, 10) + ")"
	case tk.TypeDouble:
		f, _ := v.Float()
		return "Double(" + strconv.FormatFloat(f, 'g', -1, 64) + ")"
	case tk.TypeBoolean:
		b, _ := v.Bool()
		return "Boolean(" + strconv.FormatBool(b) + ")"
	case tk.TypeBinary:
		b, _ := v.BytesString()
		if len(b) > 48 {
			return fmt.Sprintf("Binary(%d bytes, sha256 %x)", len(b), sha256.Sum256([]byte(b)))
		}
		return "Binary(0x" + hex.EncodeToString([]byte(b)) + ")"
	}
	switch {
	case v.IsInfMin():
		return "InfMin"
	case v.IsInfMax():
		return "InfMax"
	}
	return fmt.Sprintf("InvalidValue(type %d)", v.Type())
}

func fmtKey(k tk.PrimaryKey) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, p := range k {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name)
		b.WriteByte('=')
		b.WriteString(fmtValue(p.Value))
	}
	b.WriteByte(')')
	return b.String()
}

type cellView struct {
	Name    string
	Value   string
	Version int64
}

type rowView struct {
	Key   string
	Cells []cellView
}

func viewRow(r tk.Row) rowView {
	v := rowView{Key: fmtKey(r.Key)}
	for _, c := range r.Columns {
		v.Cells = append(v.Cells, cellView{Name: c.Name, Value: fmtValue(c.Value), Version: c.Version})
	}
	return v
}

func viewRows(rs []tk.Row) []rowView {
	var out []rowView
	for _, r := range rs {
		out = append(out, viewRow(r))
	}
	return out
}

func viewKeys(ks []tk.PrimaryKey) []string {
	var out []string
	for _, k := range ks {
		out = append(out, fmtKey(k))
	}
	return out
}

func rowKeys(rs []tk.Row) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmtKey(r.Key))
	}
	return out
}

// want is the view a read should return for key with cells: a version 0 is
// resolved to the clock's now, and cells are put in SPEC's order (names
// ascending, versions newest first).
func (e *env) want(key tk.PrimaryKey, cells ...tk.Column) rowView {
	v := rowView{Key: fmtKey(key)}
	for _, c := range cells {
		if c.Version == 0 {
			c.Version = e.now()
		}
		v.Cells = append(v.Cells, cellView{Name: c.Name, Value: fmtValue(c.Value), Version: c.Version})
	}
	slices.SortStableFunc(v.Cells, func(a, b cellView) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(b.Version, a.Version)
	})
	return v
}

// ---- assertions ----

// diff reports a difference between want and got.
func (e *env) diff(what string, want, got any) bool {
	e.t.Helper()
	if d := gocmp.Diff(want, got); d != "" {
		e.t.Errorf("%s: mismatch (-want +got):\n%s", what, d)
		return false
	}
	return true
}

// ok reports a non-nil err.
func (e *env) ok(what string, err error) bool {
	e.t.Helper()
	if err != nil {
		e.t.Errorf("%s: unexpected error: %v", what, err)
		return false
	}
	return true
}

// must stops the case on a non-nil err (for setup steps).
func (e *env) must(what string, err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// wantErr checks that err matches target with errors.Is, that (unless it is
// a context error) errors.As reaches a *tablekit.Error whose Code matches
// too, and that its message names every string in mention.
func (e *env) wantErr(what string, err, target error, mention ...string) bool {
	e.t.Helper()
	if err == nil {
		e.t.Errorf("%s: got no error, want %v", what, target)
		return false
	}
	if !errors.Is(err, target) {
		e.t.Errorf("%s: got error %q (%T), want one matching %v", what, err, err, target)
		return false
	}
	if target == context.Canceled || target == context.DeadlineExceeded {
		return true
	}
	var te *tk.Error
	if !errors.As(err, &te) {
		e.t.Errorf("%s: errors.As(err, *tablekit.Error) is false for %q (%T)", what, err, err)
		return false
	}
	if !errors.Is(te.Code, target) {
		e.t.Errorf("%s: *tablekit.Error Code is %v, want %v", what, te.Code, target)
	}
	good := true
	msg := err.Error()
	for _, m := range mention {
		if !mentions(msg, m) {
			e.t.Errorf("%s: error message %q does not name %q", what, msg, m)
			good = false
		}
	}
	return good
}

// mentions reports whether msg names s, raw or Go-quoted; a long s may be
// abbreviated in a message, so only its first 32 bytes are required.
func mentions(msg, s string) bool {
	if s == "" {
		return true
	}
	if len(s) > 48 {
		s = s[:32]
	}
	q := strconv.Quote(s)
	return strings.Contains(msg, s) || strings.Contains(msg, q[1:len(q)-1])
}

var errPanicked = errors.New("operation panicked")

// safe runs f and turns a panic into a test failure.
func (e *env) safe(what string, f func() error) (err error) {
	e.t.Helper()
	defer func() {
		if r := recover(); r != nil {
			e.t.Errorf("%s: panicked: %v", what, r)
			err = errPanicked
		}
	}()
	return f()
}

// ---- reads ----

// allVersions reads every version a table keeps visible (the suite never
// sets MaxVersions above 100).
var allVersions = tk.MaxVersions(100)

// expectRow checks GetRow's answer: want nil means "not found".
func (e *env) expectRow(what string, t tbl, key tk.PrimaryKey, want *rowView, opts ...tk.ReadOption) {
	e.t.Helper()
	r, found, err := t.GetRow(e.ctx, key, opts...)
	if err != nil {
		e.t.Errorf("%s: GetRow %v: %v", what, fmtKey(key), err)
		return
	}
	switch {
	case want == nil && found:
		e.t.Errorf("%s: GetRow %v found %+v, want no row", what, fmtKey(key), viewRow(r))
	case want != nil && !found:
		e.t.Errorf("%s: GetRow %v found no row, want %+v", what, fmtKey(key), *want)
	case want != nil:
		e.diff(what+": GetRow "+fmtKey(key), *want, viewRow(r))
	}
}

// rangeAll reads [start, end) (or down from start with Backward) to its end
// by following resume tokens, as a program using GetRange would.
func (e *env) rangeAll(what string, t tbl, start, end tk.PrimaryKey, opts ...tk.RangeOption) ([]tk.Row, bool) {
	e.t.Helper()
	var out []tk.Row
	var token []byte
	for range 1000 {
		o := opts
		if token != nil {
			o = append(slices.Clip(opts), tk.ResumeFrom(token))
		}
		res, err := t.GetRange(e.ctx, start, end, o...)
		if err != nil {
			e.t.Errorf("%s: GetRange: %v", what, err)
			return out, false
		}
		out = append(out, res.Rows...)
		if res.Next == nil {
			return out, true
		}
		if len(res.Rows) == 0 && token != nil && bytes.Equal(token, res.Next) {
			e.t.Errorf("%s: GetRange made no progress (no rows, same token)", what)
			return out, false
		}
		token = res.Next
	}
	e.t.Errorf("%s: GetRange did not finish in 1000 pages", what)
	return out, false
}

// scan returns every row of t, following tokens.
func (e *env) scan(what string, t tbl, opts ...tk.RangeOption) []rowView {
	e.t.Helper()
	rows, _ := e.rangeAll(what, t, t.lo(), t.hi(), opts...)
	return viewRows(rows)
}

// expectScan checks the whole content of t (every version it keeps visible).
func (e *env) expectScan(what string, t tbl, want []rowView) {
	e.t.Helper()
	e.diff(what+": table content", want, e.scan(what, t, allVersions))
}

// ---- writes for setup ----

// put writes a row with PutRow and stops the case if that fails.
func (e *env) put(t tbl, key tk.PrimaryKey, cols ...tk.Column) {
	e.t.Helper()
	e.must("setup PutRow "+fmtKey(key), t.PutRow(e.ctx, key, cols))
}

// update applies changes with UpdateRow and stops the case if that fails.
func (e *env) update(t tbl, key tk.PrimaryKey, changes ...tk.Change) {
	e.t.Helper()
	_, err := t.UpdateRow(e.ctx, key, changes)
	e.must("setup UpdateRow "+fmtKey(key), err)
}

// seedBatch writes rows with BatchWriteRow puts, 200 at a time, and stops the
// case if any write fails.
func (e *env) seedBatch(t tbl, rows []tk.Row) {
	e.t.Helper()
	for len(rows) > 0 {
		n := min(len(rows), tk.MaxBatchWrite)
		ws := make([]tk.BatchWrite, n)
		for i, r := range rows[:n] {
			ws[i] = tk.BatchPut(t.Name(), r.Key, r.Columns)
		}
		res, err := e.c.BatchWriteRow(e.ctx, ws)
		e.must("setup BatchWriteRow", err)
		if len(res) != n {
			e.t.Fatalf("setup BatchWriteRow: %d results for %d writes", len(res), n)
		}
		for i, r := range res {
			if r.Err != nil {
				e.t.Fatalf("setup BatchWriteRow %v: %v", fmtKey(rows[i].Key), r.Err)
			}
		}
		rows = rows[n:]
	}
}

// ---- the suite's own key order (SPEC §4), independent of tablekit.Compare ----

func keyValueCompare(a, b tk.Value) int {
	switch a.Type() {
	case tk.TypeInteger:
		x, _ := a.Int()
		y, _ := b.Int()
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case tk.TypeString:
		x, _ := a.Str()
		y, _ := b.Str()
		return bytes.Compare([]byte(x), []byte(y))
	case tk.TypeBinary:
		x, _ := a.Bytes()
		y, _ := b.Bytes()
		return bytes.Compare(x, y)
	}
	panic(fmt.Sprintf("conformance: %v is not a key value", a))
}

// storedKeyCompare orders two stored (finite) keys of one schema.
func storedKeyCompare(a, b tk.PrimaryKey) int {
	for i := range a {
		if c := keyValueCompare(a[i].Value, b[i].Value); c != 0 {
			return c
		}
	}
	return 0
}

// boundCompare compares a stored key with a range bound that may hold
// InfMin/InfMax in any column: the first differing column decides, and an
// infinity differs from every value.
func boundCompare(key, bound tk.PrimaryKey) int {
	for i := range key {
		b := bound[i].Value
		switch {
		case b.IsInfMin():
			return 1
		case b.IsInfMax():
			return -1
		}
		if c := keyValueCompare(key[i].Value, b); c != 0 {
			return c
		}
	}
	return 0
}

// expectedRange returns which of keys a range read must return, in order.
func expectedRange(keys []tk.PrimaryKey, start, end tk.PrimaryKey, backward bool) []tk.PrimaryKey {
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, storedKeyCompare)
	var out []tk.PrimaryKey
	for _, k := range sorted {
		if !backward && boundCompare(k, start) >= 0 && boundCompare(k, end) < 0 {
			out = append(out, k)
		}
		if backward && boundCompare(k, start) <= 0 && boundCompare(k, end) > 0 {
			out = append(out, k)
		}
	}
	if backward {
		slices.Reverse(out)
	}
	return out
}
