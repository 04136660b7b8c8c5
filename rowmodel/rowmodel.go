// Package rowmodel is for engine and adapter authors: SPEC.md's single-row
// semantics as pure functions over a stored row: what a read returns,
// whether a condition holds, and what a put, update or delete leaves behind;
// and the rules those are made of (the visibility of a cell, the version
// window, filter evaluation), which adapters that translate them into native
// predicates must agree with. The local engine is built on it, and so is
// every adapter that keeps a whole row in one native record (DynamoDB) or
// evaluates a row on the client (Bigtable's conditional paths), so the rules
// exist once. It never reads a clock: every function takes now in
// milliseconds, the Now of the request.
package rowmodel

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/tablekit/tablekit"
)

// Row is a row as a backend stores it.
type Row struct {
	// Cells holds every cell kept, sorted by ascending name and, within a
	// name, descending version; (name, version) pairs are unique. Cells may
	// include ones that TTL or MaxVersions already hide.
	Cells []tablekit.Column
	// Marker records a key-only row: written by a PutRow with no columns and
	// not deleted since. TTL does not apply to it.
	Marker bool
	// Generation is the table options' Generation the row was last
	// written under (0 when unknown). A store that keeps rows whole stores
	// it with the row: Apply refuses to rewrite a row under older options
	// than it was last written with (SPEC §3), and stamps the rows it
	// writes with the request's.
	Generation int64
}

// SortCells puts cells in stored order (name ascending, version descending).
func SortCells(cells []tablekit.Column) {
	slices.SortFunc(cells, compareCells)
}

func compareCells(a, b tablekit.Column) int {
	if c := cmp.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return cmp.Compare(b.Version, a.Version)
}

// Visible returns the cells of r that SPEC §5–6 make visible at now: not
// expired under the TTL and among the newest MaxVersions of their column.
// It returns cells in stored order; the slice is new only when some cell
// is hidden.
func Visible(r *Row, opts tablekit.TableOptions, now int64) []tablekit.Column {
	if r == nil {
		return nil
	}
	hidden := false
	n := 0
	for i := range r.Cells {
		if i == 0 || r.Cells[i].Name != r.Cells[i-1].Name {
			n = 0
		}
		if n >= opts.MaxVersions || !CellVisible(opts, r.Cells[i].Version, now) {
			hidden = true
			break
		}
		n++
	}
	if !hidden {
		return r.Cells
	}
	out := make([]tablekit.Column, 0, len(r.Cells))
	n = 0
	for i := range r.Cells {
		c := r.Cells[i]
		if i == 0 || c.Name != r.Cells[i-1].Name {
			n = 0
		}
		if !CellVisible(opts, c.Version, now) {
			continue
		}
		if n < opts.MaxVersions {
			out = append(out, c)
		}
		n++
	}
	return out
}

// Exists reports SPEC §7's existence: a visible cell or a key-only marker.
func Exists(r *Row, opts tablekit.TableOptions, now int64) bool {
	if r == nil {
		return false
	}
	if r.Marker {
		return true
	}
	for i := range r.Cells {
		if CellVisible(opts, r.Cells[i].Version, now) {
			return true
		}
	}
	return false
}

// Select applies a read's time range and per-column MaxVersions to visible
// cells (stored order in, stored order out), appending them to dst.
func Select(dst, visible []tablekit.Column, spec *tablekit.ReadSpec) []tablekit.Column {
	n := 0
	for i := range visible {
		c := &visible[i]
		if i == 0 || c.Name != visible[i-1].Name {
			n = 0
		}
		if spec.TimeRange != nil && !spec.TimeRange.Contains(c.Version) {
			continue
		}
		if n < spec.MaxVersions {
			dst = append(dst, *c)
			n++
		}
	}
	return dst
}

// Project keeps the cells of the named columns (nil names keeps all). It
// filters sel in place. When both are sorted by name (as a Client's
// projection and stored cells are), it walks them side by side.
func Project(sel []tablekit.Column, names []string) []tablekit.Column {
	if names == nil {
		return sel
	}
	out := sel[:0]
	if !slices.IsSorted(names) || !slices.IsSortedFunc(sel, byName) { // not from a Client, or cells as a server sent them
		for _, c := range sel {
			if slices.Contains(names, c.Name) {
				out = append(out, c)
			}
		}
		return out
	}
	// Cells and names both sorted by name: one walk beside the other.
	j := 0
	for _, c := range sel {
		for j < len(names) && names[j] < c.Name {
			j++
		}
		if j == len(names) {
			break
		}
		if names[j] == c.Name {
			out = append(out, c)
		}
	}
	return out
}

// Shape sums up a stored row's cells for [Shape.Whole]: a store that keeps
// rows immutable computes it once, when it stores the row, and can then
// answer most reads without looking at the cells. The zero Shape is that
// of a row with no cells.
type Shape struct {
	// Oldest is the smallest version among the cells.
	Oldest int64
	// Versions is the largest number of versions any one column has.
	Versions int
}

// ShapeOf returns the Shape of cells (sorted as Row.Cells are).
func ShapeOf(cells []tablekit.Column) Shape {
	var s Shape
	run := 0
	for i := range cells {
		c := &cells[i]
		if i == 0 || c.Name != cells[i-1].Name {
			run = 0
		}
		run++
		s.Versions = max(s.Versions, run)
		if i == 0 || c.Version < s.Oldest {
			s.Oldest = c.Version
		}
	}
	return s
}

// Whole reports whether a read of a row of shape s returns its stored
// cells exactly as they are, before the filter: every cell is visible
// (none is past the TTL, no column has more versions than the table's or
// the read's MaxVersions), and the read has neither a time range nor a
// projection. Then, for a row r of that shape, AppendRead(dst, r, ...)
// appends r.Cells whole when r exists (r.Marker or len(r.Cells) > 0) and
// passes spec.Filter, and nothing otherwise. A read of many rows decides
// it with a [WholeRead] made once.
func (s Shape) Whole(opts *tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) bool {
	return NewWholeRead(opts, spec, now).Of(s)
}

// WholeRead is [Shape.Whole] for one read, with what does not depend on the
// row worked out once.
type WholeRead struct {
	versions int   // the most versions of a column the read returns whole; 0: none
	oldest   int64 // the oldest visible version
}

// NewWholeRead prepares Shape.Whole for a read.
func NewWholeRead(opts *tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) WholeRead {
	if spec.TimeRange != nil || spec.Columns != nil {
		return WholeRead{versions: -1}
	}
	return WholeRead{versions: min(opts.MaxVersions, spec.MaxVersions), oldest: OldestVisible(*opts, now)}
}

// Of is Shape.Whole for a row of shape s.
func (w WholeRead) Of(s Shape) bool {
	return s.Versions <= w.versions && (s.Versions == 0 || s.Oldest >= w.oldest)
}

// Read returns what a GetRow or a range read returns for a stored row: the
// selected, filtered and projected cells (a new slice), and whether the row
// is returned at all (it exists and passes the filter).
func Read(r *Row, opts tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) ([]tablekit.Column, bool) {
	if r == nil {
		return nil, false
	}
	cols, ok := AppendRead(make([]tablekit.Column, 0, len(r.Cells)), r, opts, spec, now)
	return cols[:len(cols):len(cols)], ok
}

// AppendRead is Read appending the returned cells to dst; on false, dst
// comes back unchanged. A range read shares one buffer across its rows.
//
// It is Exists, Visible and Select in one pass over the stored cells (the
// same rules, in the same order: TTL, then the table's MaxVersions among the
// unexpired versions of a column, then the read's time range and
// MaxVersions), then the filter and the projection.
func AppendRead(dst []tablekit.Column, r *Row, opts tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) ([]tablekit.Column, bool) {
	if r == nil {
		return dst, false
	}
	start := len(dst)
	dst, _, exists := scan(dst, r, opts, spec, now, true)
	if !exists {
		return dst[:start], false
	}
	if spec.Filter != nil && !MatchFilter(spec.Filter, dst[start:]) {
		clear(dst[start:])
		return dst[:start], false
	}
	p := Project(dst[start:], spec.Columns)
	clear(dst[start+len(p):])
	return dst[:start+len(p)], true
}

// ReadLen returns len and ok of what Read returns, building no cells when
// the read has no filter (a filter needs them): a range read sizes its page
// with it before it copies the rows out.
func ReadLen(r *Row, opts tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) (int, bool) {
	if r == nil {
		return 0, false
	}
	if spec.Filter != nil {
		var buf [8]tablekit.Column
		cols, ok := AppendRead(buf[:0], r, opts, spec, now)
		return len(cols), ok
	}
	_, n, exists := scan(nil, r, opts, spec, now, false)
	return n, exists
}

// scan is the selection of AppendRead: with keep, it appends the selected
// cells to dst; without, it counts those the projection keeps. exists is
// Exists.
func scan(dst []tablekit.Column, r *Row, opts tablekit.TableOptions, spec *tablekit.ReadSpec, now int64, keep bool) (_ []tablekit.Column, n int, exists bool) {
	exists = r.Marker
	tr := spec.TimeRange
	vis, sel := 0, 0 // per column: visible versions seen, versions selected
	for i := range r.Cells {
		c := &r.Cells[i]
		if i == 0 || c.Name != r.Cells[i-1].Name {
			vis, sel = 0, 0
		}
		if !CellVisible(opts, c.Version, now) {
			continue
		}
		exists = true
		if vis >= opts.MaxVersions {
			continue
		}
		vis++
		if tr != nil && !tr.Contains(c.Version) {
			continue
		}
		if sel < spec.MaxVersions {
			sel++
			switch {
			case keep:
				dst = append(dst, *c)
			case spec.Columns == nil || slices.Contains(spec.Columns, c.Name):
				n++
			}
		}
	}
	return dst, n, exists
}

// Check evaluates a write condition on the stored row (SPEC §9): row
// existence first, then the column filter over the row's visible cells. It
// returns an error matching tablekit.ErrConditionFailed when it fails.
func Check(r *Row, opts tablekit.TableOptions, cond tablekit.Condition, now int64) error {
	if cond.IsZero() {
		return nil
	}
	exists := Exists(r, opts, now)
	switch cond.Row {
	case tablekit.ExpectExist:
		if !exists {
			return tablekit.Errorf(tablekit.ErrConditionFailed, "row existence: expected the row to exist")
		}
	case tablekit.ExpectNotExist:
		if exists {
			return tablekit.Errorf(tablekit.ErrConditionFailed, "row existence: expected the row not to exist")
		}
	}
	if cond.Column != nil && !MatchFilter(cond.Column, Visible(r, opts, now)) {
		return tablekit.Errorf(tablekit.ErrConditionFailed, "column condition did not match")
	}
	return nil
}

// Put returns the row a PutRow leaves: the given cells and nothing else
// (SPEC §8), trimmed of what is already invisible. cols must be validated,
// with versions set.
func Put(cols []tablekit.Column, opts tablekit.TableOptions, now int64) Row {
	return put(nil, cols, opts, now)
}

// put is Put building the row's cells in buf's memory (see ApplyInto).
func put(buf, cols []tablekit.Column, opts tablekit.TableOptions, now int64) Row {
	if len(cols) == 0 {
		return Row{Marker: true}
	}
	cells := append(buf[:0], cols...)
	SortCells(cells)
	return Row{Cells: trim(cells, opts, now)}
}

// Update returns the row an UpdateRow leaves and the new value of each
// incremented column. r is not modified. It fails with ErrInvalidArgument,
// and changes nothing, when an increment meets a non-Integer latest value or
// overflows.
func Update(r *Row, changes []tablekit.Change, opts tablekit.TableOptions, now int64) (Row, []tablekit.Column, error) {
	return update(nil, r, changes, opts, now)
}

// update is Update building the row's cells in buf's memory (see
// ApplyInto); with a nil buf, in a new slice with room for the cells the
// changes may add, so that they never make it grow again.
func update(buf []tablekit.Column, r *Row, changes []tablekit.Change, opts tablekit.TableOptions, now int64) (Row, []tablekit.Column, error) {
	out := Row{Cells: buf[:0]}
	if r != nil {
		// Start from what is visible: a version that lowering MaxVersions or
		// the TTL hid stays hidden whatever the changes delete (SPEC §5).
		visible := Visible(r, opts, now)
		out.Marker = r.Marker
		// Room for the cells the changes may add, so that they never make
		// the copy grow (and allocate) again.
		grow := 0
		for _, ch := range changes {
			if ch.Kind == tablekit.ChangePut || ch.Kind == tablekit.ChangeIncrement {
				grow++
			}
		}
		if n := len(visible) + grow; n > 0 {
			out.Cells = append(slices.Grow(out.Cells, n), visible...)
		} else if out.Cells == nil {
			out.Cells = slices.Clone(visible)
		}
	}
	var incs []tablekit.Column
	for _, ch := range changes {
		switch ch.Kind {
		case tablekit.ChangePut:
			out.Cells = setCell(out.Cells, tablekit.Column{Name: ch.Column, Value: ch.Value, Version: ch.Version})
		case tablekit.ChangeDeleteVersion:
			if i, ok := findCell(out.Cells, ch.Column, ch.Version); ok {
				out.Cells = slices.Delete(out.Cells, i, i+1)
			}
		case tablekit.ChangeDeleteColumn:
			lo, hi := columnSpan(out.Cells, ch.Column)
			out.Cells = slices.Delete(out.Cells, lo, hi)
		case tablekit.ChangeIncrement:
			sum, version, err := increment(&out, ch, opts, now)
			if err != nil {
				return Row{}, nil, err
			}
			c := tablekit.Column{Name: ch.Column, Value: tablekit.Integer(sum), Version: version}
			out.Cells = setCell(out.Cells, c)
			incs = append(incs, c)
		}
	}
	out.Cells = trim(out.Cells, opts, now)
	return out, incs, nil
}

// increment computes the sum of an Increment change against the latest
// visible version of its column, and the version to write it at: now, or
// the latest version itself when that is later. Writing below a newer
// version would leave the sum hidden behind it, so an increment whose Now
// was taken before a concurrent one committed would be lost; with this rule
// the sum is always the column's latest value (Bigtable's ReadModifyWrite
// does the same).
func increment(r *Row, ch tablekit.Change, opts tablekit.TableOptions, now int64) (sum, version int64, err error) {
	var base int64
	version = now
	lo, hi := columnSpan(r.Cells, ch.Column)
	for _, c := range r.Cells[lo:hi] {
		if !CellVisible(opts, c.Version, now) {
			continue
		}
		v, ok := c.Value.Int()
		if !ok {
			return 0, 0, tablekit.Errorf(tablekit.ErrInvalidArgument, "column %q: Increment needs an Integer, the latest version is %v", ch.Column, c.Value.Type())
		}
		base = v
		version = max(now, c.Version)
		break
	}
	if (ch.Delta > 0 && base > math.MaxInt64-ch.Delta) || (ch.Delta < 0 && base < math.MinInt64-ch.Delta) {
		return 0, 0, tablekit.Errorf(tablekit.ErrInvalidArgument, "column %q: Increment of %d by %d overflows int64", ch.Column, base, ch.Delta)
	}
	return base + ch.Delta, version, nil
}

// columnSpan returns the index range of name's cells in stored order.
func columnSpan(cells []tablekit.Column, name string) (lo, hi int) {
	lo, _ = slices.BinarySearchFunc(cells, name, func(c tablekit.Column, n string) int { return cmp.Compare(c.Name, n) })
	hi = lo
	for hi < len(cells) && cells[hi].Name == name {
		hi++
	}
	return lo, hi
}

func findCell(cells []tablekit.Column, name string, version int64) (int, bool) {
	return slices.BinarySearchFunc(cells, tablekit.Column{Name: name, Version: version}, compareCells)
}

// setCell writes c, replacing the cell of the same (name, version).
func setCell(cells []tablekit.Column, c tablekit.Column) []tablekit.Column {
	i, ok := findCell(cells, c.Name, c.Version)
	if ok {
		cells[i] = c
		return cells
	}
	return slices.Insert(cells, i, c)
}

// trim drops cells that can never be seen again: expired ones, and versions
// beyond MaxVersions among the visible ones. Cells are in stored order; the
// slice is reused.
func trim(cells []tablekit.Column, opts tablekit.TableOptions, now int64) []tablekit.Column {
	out := cells[:0]
	n := 0
	for i := range cells {
		c := &cells[i]
		if i == 0 || c.Name != cells[i-1].Name {
			n = 0
		}
		if !CellVisible(opts, c.Version, now) || n >= opts.MaxVersions {
			continue
		}
		n++
		if len(out) < i { // a cell was dropped before: move c down
			out = append(out, *c)
		} else {
			out = out[:i+1]
		}
	}
	clear(cells[len(out):])
	return out[:len(out):len(out)]
}

// Apply runs one write against the stored row r (nil when absent),
// checking its condition first. It returns the new row (nil when the write
// deletes the row or leaves it without cells or marker), the increments,
// and the condition, increment or staleness error; on error nothing must be
// written.
func Apply(r *Row, w *tablekit.WriteRequest) (*Row, *tablekit.UpdateResult, error) {
	var nr Row
	keep, res, err := ApplyTo(&nr, r, w)
	if !keep {
		return nil, res, err
	}
	return &nr, res, nil
}

// ApplyTo is Apply writing the new row into *dst (which an engine may have
// allocated as part of its own record) instead of returning a new one: keep
// is false, and *dst untouched, when the write deletes the row or leaves it
// without cells or marker, or fails.
//
// A row whose Generation is newer than the request's Meta was written under
// options the request does not know: ApplyTo refuses it with an error
// matching driver.ErrStaleMeta (the Client reads the table again and
// retries), so a stale writer never trims what newer options keep. A stale
// writer could still reveal what newer options hide: see [Reveals].
func ApplyTo(dst *Row, r *Row, w *tablekit.WriteRequest) (keep bool, res *tablekit.UpdateResult, err error) {
	next, keep, res, err := ApplyInto(nil, r, w)
	if keep {
		*dst = next
	}
	return keep, res, err
}

// ApplyInto is ApplyTo returning the new row, its cells built in buf's
// memory (appended to buf[:0], which grows as append grows it): for an
// engine that encodes the new row into a record of its own and then drops
// the cells, and can so build them in a buffer it reuses, or one on its
// stack. buf must not share memory with r's cells or w's. The cells'
// strings are those of r and w, as ApplyTo's are.
func ApplyInto(buf []tablekit.Column, r *Row, w *tablekit.WriteRequest) (next Row, keep bool, res *tablekit.UpdateResult, err error) {
	m := w.Meta
	if r != nil {
		if err := CheckGeneration(m, r.Generation); err != nil {
			return Row{}, false, nil, err
		}
	}
	if err := Check(r, m.Options, w.Condition, w.Now); err != nil {
		return Row{}, false, nil, err
	}
	switch w.Kind {
	case tablekit.WritePut:
		next = put(buf, w.Columns, m.Options, w.Now)
		next.Generation = m.Generation
		return next, true, nil, nil
	case tablekit.WriteUpdate:
		nr, incs, err := update(buf, r, w.Changes, m.Options, w.Now)
		if err != nil {
			return Row{}, false, nil, err
		}
		res := &tablekit.UpdateResult{Increments: incs}
		if len(nr.Cells) == 0 && !nr.Marker {
			return Row{}, false, res, nil
		}
		nr.Generation = m.Generation
		return nr, true, res, nil
	case tablekit.WriteDelete:
		return Row{}, false, nil, nil
	}
	return Row{}, false, nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "write of unknown kind %d", w.Kind)
}

// byName orders cells by name alone.
func byName(a, b tablekit.Column) int { return strings.Compare(a.Name, b.Name) }
