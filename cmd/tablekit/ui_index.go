package main

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/tablekit/tablekit"
)

// Index pages (SPEC §16): the rows view of ui_rows.go over an index, in
// index-key order, read-only, each row linking to its row in the table.

// rowSource is what a rows page reads: a table, or one of its indexes.
type rowSource struct {
	c     *console
	table string
	index string              // "": the table itself
	m     *tablekit.TableMeta // the table
	view  *tablekit.TableMeta // the rows' key schema: the table's, or the index key's
}

// source describes table (and its index, if index is not "").
func (c *console) source(ctx context.Context, table, index string) (*rowSource, error) {
	m, err := c.db.DescribeTable(ctx, table)
	if err != nil {
		return nil, err
	}
	src := &rowSource{c: c, table: table, index: index, m: &m, view: &m}
	if index == "" {
		return src, nil
	}
	if src.view, _, err = indexView(&m, index); err != nil {
		return nil, usagef("%v", err) // a bad address: 400, not a failure of the store
	}
	return src, nil
}

// indexView is m with the key schema of its index's rows: the index
// columns, then the table's key columns not among them.
func indexView(m *tablekit.TableMeta, index string) (*tablekit.TableMeta, *tablekit.IndexSpec, error) {
	var spec *tablekit.IndexSpec
	for i := range m.Indexes {
		if m.Indexes[i].Name == index {
			spec = &m.Indexes[i]
		}
	}
	if spec == nil {
		return nil, nil, fmt.Errorf("table %q has no index %q", m.Name, index)
	}
	view := *m
	view.Key = nil
	for _, c := range spec.Columns {
		if c.Type == 0 { // a key column of the table, its type left to it
			if kc, ok := keyColumn(m, c.Name); ok {
				c.Type = kc.Type
			}
		}
		view.Key = append(view.Key, c)
	}
	for _, kc := range m.Key {
		if _, ok := keyColumn(&tablekit.TableMeta{Key: spec.Columns}, kc.Name); !ok {
			kc.AutoIncrement = false
			view.Key = append(view.Key, kc)
		}
	}
	return &view, spec, nil
}

func keyColumn(m *tablekit.TableMeta, name string) (tablekit.KeyColumn, bool) {
	for _, kc := range m.Key {
		if kc.Name == name {
			return kc, true
		}
	}
	return tablekit.KeyColumn{}, false
}

// owner names whose key s's rows have, for errors.
func (s *rowSource) owner() keyOwner { return keyOwner{table: s.table, index: s.index} }

// path is the rows page of s.
func (s *rowSource) path() string {
	p := "/t/" + url.PathEscape(s.table)
	if s.index != "" {
		p += "/i/" + url.PathEscape(s.index)
	}
	return p
}

// rows reads s from start towards end.
func (s *rowSource) rows(ctx context.Context, start, end tablekit.PrimaryKey, opts ...tablekit.RangeOption) iter.Seq2[tablekit.Row, error] {
	if s.index == "" {
		return s.c.db.Table(s.table).Rows(ctx, start, end, opts...)
	}
	return s.c.db.Table(s.table).Index(s.index).Rows(ctx, start, end, opts...)
}

// baseKey is the table's key of a row of s: an index key holds every key
// column of the table.
func (s *rowSource) baseKey(k tablekit.PrimaryKey) tablekit.PrimaryKey {
	if s.index == "" {
		return k
	}
	base := make(tablekit.PrimaryKey, 0, len(s.m.Key))
	for _, kc := range s.m.Key {
		v, _ := k.Get(kc.Name)
		base = append(base, tablekit.KeyPart{Name: kc.Name, Value: v})
	}
	return base
}

// indexPage shows one page of an index's rows.
func (c *console) indexPage(w http.ResponseWriter, r *http.Request) {
	table, index := r.PathValue("table"), r.PathValue("index")
	data, err := func() (*rowsPageData, error) {
		src, err := c.source(r.Context(), table, index)
		if err != nil {
			return nil, err
		}
		return c.readRows(r.Context(), src, r.URL.Query())
	}()
	if err != nil {
		c.fail(w, table, err)
		return
	}
	c.render(w, 0, "rows", table+" · "+index, table, data, "")
}

// indexInfo is one index of the tables page.
type indexInfo struct {
	Name    string
	Href    string
	Columns string // the index columns, NAME:TYPE
	Include string
	State   string // ready, or building (write-only while it is filled)
}

// indexesOf lists m's indexes for the tables page.
func indexesOf(m *tablekit.TableMeta) []indexInfo {
	view := make([]indexInfo, 0, len(m.Indexes))
	for _, ix := range m.Indexes {
		var cols []string
		for _, c := range ix.Columns {
			t := c.Type
			if kc, ok := keyColumn(m, c.Name); ok && t == 0 {
				t = kc.Type
			}
			cols = append(cols, c.Name+":"+t.String())
		}
		state := "building"
		if ix.State == tablekit.IndexReady {
			state = "ready"
		}
		view = append(view, indexInfo{Name: ix.Name, Href: "/t/" + url.PathEscape(m.Name) + "/i/" + url.PathEscape(ix.Name),
			Columns: strings.Join(cols, ", "), Include: strings.Join(ix.Include, ", "), State: state})
	}
	return view
}
