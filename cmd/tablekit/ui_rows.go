package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"html"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tablekit/tablekit"
)

// cellView is one value as a page shows it.
type cellView struct {
	Type  string // String, Integer, …: the CSS class
	Text  string // the value, truncated in the rows grid
	Title string // a tooltip: Binary as base64
	Cut   bool   // Text is truncated: the full value is fetched on demand
	Empty bool   // the row has no such column
}

// showValue is v as the console shows it: a String as its text, every
// other type in the command line's syntax (i:42, d:1.5, bool:true,
// b:0x00ff), which the filter box and the edit box take back.
func showValue(v tablekit.Value, limit int) cellView {
	cv := cellView{Type: v.Type().String()}
	if s, ok := v.Str(); ok {
		cv.Text = s
	} else {
		cv.Text = formatValue(v)
	}
	if b, ok := v.Bytes(); ok {
		cv.Title = "base64: " + base64.StdEncoding.EncodeToString(b)
		if len(cv.Title) > 200 {
			cv.Title = cv.Title[:200] + "…"
		}
	}
	if limit > 0 && utf8.RuneCountInString(cv.Text) > limit {
		cut := cv.Text
		for n := 0; n < limit; n++ {
			_, size := utf8.DecodeRuneInString(cut[len(cv.Text)-len(cut):])
			cut = cut[size:]
		}
		cv.Text = cv.Text[:len(cv.Text)-len(cut)] + "…"
		cv.Cut = true
	}
	return cv
}

// showKeyValue is a key column's value as the console shows it: as
// showValue, an Integer or Binary without the type prefix (the schema
// gives the type), as keys are written on the command line.
func showKeyValue(v tablekit.Value, limit int) cellView {
	cv := showValue(v, limit)
	if v.Type() != tablekit.TypeString && !cv.Cut {
		cv.Text = formatKeyValue(v)
	}
	return cv
}

// rowsQuery is the rows page's form: what to read and where.
type rowsQuery struct {
	Prefix   []string // one box per key column
	Filter   string
	Backward bool
	Columns  []string // the chosen columns; none: all
	N        int
	After    string // resume after this key (a formatKey)
	Before   string // the page before this key
}

func readRowsQuery(m *tablekit.TableMeta, q url.Values) (rowsQuery, error) {
	rq := rowsQuery{Filter: strings.TrimSpace(q.Get("filter")), Backward: q.Get("dir") == "backward", N: uiDefaultPage,
		After: q.Get("after"), Before: q.Get("before")}
	for _, kc := range m.Key {
		rq.Prefix = append(rq.Prefix, q.Get("p."+kc.Name))
	}
	for _, c := range q["col"] {
		if c != "" && !slices.Contains(rq.Columns, c) {
			rq.Columns = append(rq.Columns, c)
		}
	}
	if s := q.Get("n"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > uiMaxPage {
			return rq, usagef("rows per page: want 1 to %d, not %q", uiMaxPage, s)
		}
		rq.N = n
	}
	return rq, nil
}

// values is rq as a query string, without the paging cursor.
func (rq rowsQuery) values(m *tablekit.TableMeta) url.Values {
	v := url.Values{}
	for i, kc := range m.Key {
		if rq.Prefix[i] != "" {
			v.Set("p."+kc.Name, rq.Prefix[i])
		}
	}
	if rq.Filter != "" {
		v.Set("filter", rq.Filter)
	}
	if rq.Backward {
		v.Set("dir", "backward")
	}
	for _, c := range rq.Columns {
		v.Add("col", c)
	}
	if rq.N != uiDefaultPage {
		v.Set("n", strconv.Itoa(rq.N))
	}
	return v
}

// prefixArg is the prefix boxes as scan --prefix takes them: the leading
// boxes filled, up to the first empty one.
func (rq rowsQuery) prefixArg(m *tablekit.TableMeta) (string, error) {
	var parts []string
	gap := false
	for i, p := range rq.Prefix {
		if p == "" {
			gap = true
			continue
		}
		if gap {
			return "", usagef("key prefix: fill the key columns from the first one (%s) on, without a gap", m.Key[0].Name)
		}
		parts = append(parts, m.Key[i].Name+"="+p)
	}
	return strings.Join(parts, ","), nil
}

// rowsPageData is the rows page's body.
type rowsPageData struct {
	Table     string
	Index     string // the index read, SPEC §16 ("": the table's rows)
	Path      string // the page's path: /t/TABLE or /t/TABLE/i/INDEX
	KeyCols   []string
	Query     rowsQuery
	Prefix    []prefixBox
	Shown     []string // attribute columns in the grid
	Choices   []choice // the column chooser
	Rows      []rowView
	Next      string // links; "" when there is none
	Prev      string
	First     string
	Feed      bool
	ExportURL string
	PutKey    string      // an example key for the put form
	Indexes   []indexInfo // the table's indexes, linked
}

type prefixBox struct{ Name, Type, Value string }

type choice struct {
	Name    string
	Checked bool
}

type rowView struct {
	Key   string
	Href  string
	Keys  []cellView
	Cells []cellView
	More  int // columns not in the grid
}

// rowsPage shows one page of rows.
func (c *console) rowsPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	data, err := c.rowsData(r.Context(), name, r.URL.Query())
	if err != nil {
		c.fail(w, name, err)
		return
	}
	c.render(w, 0, "rows", name, name, data, "")
}

// rowsData reads the page of rows of a table that q asks for.
func (c *console) rowsData(ctx context.Context, name string, q url.Values) (*rowsPageData, error) {
	src, err := c.source(ctx, name, "")
	if err != nil {
		return nil, err
	}
	return c.readRows(ctx, src, q)
}

// readRows reads the page of rows of src that q asks for: one
// implementation of the rows view for tables and indexes.
func (c *console) readRows(ctx context.Context, src *rowSource, q url.Values) (*rowsPageData, error) {
	view := src.view
	rq, err := readRowsQuery(view, q)
	if err != nil {
		return nil, err
	}
	var read []tablekit.ReadOption
	if rq.Filter != "" {
		f, err := parseFilter(rq.Filter, src.m)
		if err != nil {
			return nil, err
		}
		read = append(read, tablekit.WithFilter(f))
	}
	if len(rq.Columns) > 0 {
		read = append(read, tablekit.Columns(rq.Columns...))
	}
	prefix, err := rq.prefixArg(view)
	if err != nil {
		return nil, err
	}
	empty, limit := "", 0
	sr, err := rangeFlags{start: &empty, end: &empty, prefix: &prefix, filter: &empty, limit: &limit, backward: &rq.Backward}.resolveOf(view, src.owner())
	if err != nil {
		return nil, err
	}
	var rows []tablekit.Row
	var more bool
	switch {
	case rq.Before != "":
		cur, err := parseKeyOf(view, src.owner(), rq.Before, false, tablekit.Value{})
		if err != nil {
			return nil, usagef("before: %v", err)
		}
		// The page before cur: walk the other way from it, then turn round.
		rows, more, err = c.walk(ctx, src, cur, extremeBound(view, rq.Backward), !rq.Backward, sr.keep, cur, rq.N, read)
		if err != nil {
			return nil, err
		}
		slices.Reverse(rows)
	case rq.After != "":
		cur, err := parseKeyOf(view, src.owner(), rq.After, false, tablekit.Value{})
		if err != nil {
			return nil, usagef("after: %v", err)
		}
		rows, more, err = c.walk(ctx, src, cur, sr.end, rq.Backward, sr.keep, cur, rq.N, read)
		if err != nil {
			return nil, err
		}
	default:
		rows, more, err = c.walk(ctx, src, sr.start, sr.end, rq.Backward, sr.keep, nil, rq.N, read)
		if err != nil {
			return nil, err
		}
	}
	d := &rowsPageData{Table: src.table, Index: src.index, Path: src.path(), Query: rq}
	base := rq.values(view)
	link := func(k, v string) string {
		q := url.Values{}
		for kk, vv := range base {
			q[kk] = vv
		}
		if k != "" {
			q.Set(k, v)
		}
		return d.Path + "?" + q.Encode()
	}
	d.First = link("", "")
	if len(rows) > 0 {
		first, last := formatKey(rows[0].Key), formatKey(rows[len(rows)-1].Key)
		if rq.Before == "" && more || rq.Before != "" {
			d.Next = link("after", last)
		}
		if rq.After != "" || rq.Before != "" && more {
			d.Prev = link("before", first)
		}
	}
	for i, kc := range view.Key {
		d.KeyCols = append(d.KeyCols, kc.Name)
		d.Prefix = append(d.Prefix, prefixBox{Name: kc.Name, Type: kc.Type.String(), Value: rq.Prefix[i]})
	}
	d.Shown, d.Choices = chooseColumns(rows, rq.Columns)
	for _, row := range rows {
		d.Rows = append(d.Rows, rowViewOf(src.table, src.baseKey(row.Key), row, d.Shown))
	}
	d.Indexes = indexesOf(src.m)
	if src.index == "" {
		d.Feed = c.db.Capabilities().ChangeFeed
		d.ExportURL = d.Path + "/export"
		d.PutKey = exampleKey(src.m)
	}
	return d, nil
}

// Grid is the rows grid's body. It is written here rather than by the
// template, which spends most of a page's time on reflection for the
// hundreds of cells of a page: every text and attribute goes through
// html.EscapeString, every URL is built with url.Values and escaped too.
func (d *rowsPageData) Grid() template.HTML {
	var b strings.Builder
	b.Grow(len(d.Rows) * (len(d.Shown) + len(d.KeyCols)) * 64)
	esc := func(s string) { b.WriteString(html.EscapeString(s)) }
	cellURL := "/t/" + url.PathEscape(d.Table) + "/cell?"
	for _, row := range d.Rows {
		b.WriteString("<tr>\n")
		for i, k := range row.Keys {
			b.WriteString(`<td class="key v `)
			esc(k.Type)
			b.WriteString(`">`)
			if i == 0 {
				b.WriteString(`<a href="`)
				esc(row.Href)
				b.WriteString(`">`)
				esc(k.Text)
				b.WriteString(`</a>`)
			} else {
				esc(k.Text)
			}
			b.WriteString(`</td>`)
		}
		b.WriteString("\n")
		for i, c := range row.Cells {
			if c.Empty {
				b.WriteString(`<td class="v"><span class="muted">·</span></td>`)
				continue
			}
			b.WriteString(`<td class="v `)
			esc(c.Type)
			b.WriteByte('"')
			if c.Title != "" {
				b.WriteString(` title="`)
				esc(c.Title)
				b.WriteByte('"')
			}
			b.WriteByte('>')
			esc(c.Text)
			if c.Cut {
				b.WriteString(` <a class="more" href="`)
				esc(cellURL + url.Values{"key": {row.Key}, "col": {d.Shown[i]}}.Encode())
				b.WriteString(`">show all</a>`)
			}
			b.WriteString(`</td>`)
		}
		b.WriteString("\n<td><a class=\"open\" href=\"")
		esc(row.Href)
		b.WriteString(`">open`)
		if row.More > 0 {
			fmt.Fprintf(&b, " (+%d columns)", row.More)
		}
		b.WriteString("</a></td>\n</tr>")
	}
	if len(d.Rows) == 0 {
		b.WriteString(`<tr><td colspan="99" class="muted">No rows.</td></tr>`)
	}
	return template.HTML(b.String()) // every piece escaped above
}

// extremeBound is the key below (backward false) or above every row.
func extremeBound(m *tablekit.TableMeta, top bool) tablekit.PrimaryKey {
	if top {
		return fullBound(m, tablekit.InfMax)
	}
	return fullBound(m, tablekit.InfMin)
}

// walk reads up to n rows from start towards end, skipping the row at
// skip (the cursor) and rows that fail keep (the prefix) before the first
// that passes, stopping at the first that fails it after; more says
// whether a row follows. At most n+1 rows are held.
func (c *console) walk(ctx context.Context, src *rowSource, start, end tablekit.PrimaryKey, backward bool, keep func(tablekit.PrimaryKey) bool, skip tablekit.PrimaryKey, n int, read []tablekit.ReadOption) ([]tablekit.Row, bool, error) {
	opts := []tablekit.RangeOption{tablekit.PageSize(min(n+2, tablekit.MaxPageRows))}
	if backward {
		opts = append(opts, tablekit.Backward())
	}
	for _, o := range read {
		opts = append(opts, o)
	}
	var rows []tablekit.Row
	matched := false
	for row, err := range src.rows(ctx, start, end, opts...) {
		if err != nil {
			return nil, false, err
		}
		if skip != nil && tablekit.CompareKeys(row.Key, skip) == 0 {
			continue
		}
		if keep != nil && !keep(row.Key) {
			if matched {
				break
			}
			continue
		}
		matched = true
		if len(rows) == n {
			return rows, true, nil
		}
		rows = append(rows, row)
	}
	return rows, false, nil
}

// chooseColumns picks the grid's columns: the chosen ones, else the
// first uiShownColumns names on the page; the chooser offers every name
// on the page and the chosen ones.
func chooseColumns(rows []tablekit.Row, chosen []string) (shown []string, choices []choice) {
	seen := map[string]bool{}
	var names []string
	for _, row := range rows {
		for _, col := range row.Columns {
			if !seen[col.Name] {
				seen[col.Name] = true
				names = append(names, col.Name)
			}
		}
	}
	for _, n := range chosen {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		choices = append(choices, choice{Name: n, Checked: slices.Contains(chosen, n)})
	}
	if len(chosen) > 0 {
		return chosen, choices
	}
	if len(names) > uiShownColumns {
		names = names[:uiShownColumns]
	}
	return names, choices
}

// rowViewOf is row as the grid shows it; base is the key of its row in
// the table (the row's own key, but for an index row).
func rowViewOf(table string, base tablekit.PrimaryKey, row tablekit.Row, shown []string) rowView {
	key := formatKey(base)
	rv := rowView{Key: key, Href: rowHref(table, key)}
	for _, p := range row.Key {
		rv.Keys = append(rv.Keys, showKeyValue(p.Value, uiTruncate))
	}
	distinct := 0
	for i, col := range row.Columns {
		if i == 0 || row.Columns[i-1].Name != col.Name {
			distinct++
		}
	}
	for _, name := range shown {
		v, ok := row.Get(name)
		if !ok {
			rv.Cells = append(rv.Cells, cellView{Empty: true})
			continue
		}
		distinct--
		rv.Cells = append(rv.Cells, showValue(v, uiTruncate))
	}
	rv.More = distinct
	return rv
}

func rowHref(table, key string) string {
	return "/t/" + url.PathEscape(table) + "/row?" + url.Values{"key": {key}}.Encode()
}

// exampleKey is a key of m in the command-line syntax, for the put form.
func exampleKey(m *tablekit.TableMeta) string {
	var parts []string
	for _, kc := range m.Key {
		ex := "abc"
		switch kc.Type {
		case tablekit.TypeInteger:
			ex = "1"
			if kc.AutoIncrement {
				ex = "AUTO"
			}
		case tablekit.TypeBinary:
			ex = "0x00ff"
		}
		parts = append(parts, kc.Name+"="+ex)
	}
	return strings.Join(parts, ",")
}

// cellValue is the full latest value of one cell, as text: the rows
// grid's "show all" of a truncated value.
func (c *console) cellValue(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	err := func() error {
		_, k, err := c.tableKey(r, r.URL.Query().Get("key"))
		if err != nil {
			return err
		}
		col := r.URL.Query().Get("col")
		row, found, err := c.db.Table(name).GetRow(r.Context(), k, tablekit.Columns(col))
		if err != nil {
			return err
		}
		v, ok := row.Get(col)
		if !found || !ok {
			return fmt.Errorf("row %s of table %q has no column %q now", formatKey(k), name, col)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte(showValue(v, 0).Text))
		return nil
	}()
	if err != nil {
		http.Error(w, err.Error(), errStatus(err))
	}
}

// putRow writes a new row from the rows page's form: a key in the command
// line's syntax and NAME=TYPE:VALUE[@VERSION] cells, one a line. It does
// not overwrite a row that exists (ExpectNotExist): edit that on its page.
func (c *console) putRow(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	err := func() error {
		m, k, err := c.tableKey(r, r.PostFormValue("key"))
		if err != nil {
			return err
		}
		types := indexTypes(m)
		var cols []tablekit.Column
		for line := range strings.SplitSeq(r.PostFormValue("cols"), "\n") {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			col, err := parseColumnTyped(line, types)
			if err != nil {
				return usagef("column %s: %v", shorten(line), err)
			}
			cols = append(cols, col)
		}
		var got tablekit.PrimaryKey
		if err := c.db.Table(name).PutRow(r.Context(), k, cols, tablekit.ExpectNotExist, tablekit.ReturnKey(&got)); err != nil {
			if errStatus(err) == http.StatusConflict {
				return fmt.Errorf("row %s already exists in table %q: nothing written (edit it on its page): %w", formatKey(k), name, err)
			}
			return err
		}
		if got == nil {
			got = k
		}
		seeOther(w, r, "/t/"+url.PathEscape(name)+"/row", url.Values{"key": {formatKey(got)}})
		return nil
	}()
	if err != nil {
		c.fail(w, name, err)
	}
}
