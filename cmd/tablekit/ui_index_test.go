package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tablekit/tablekit"
)

// Index pages (SPEC §16): the rows view over an index.

// seedShop puts n rows of table shop (id:String) whose status runs the
// other way from id, so index-key order is the table's order reversed.
func seedShop(t *testing.T, db *tablekit.Client, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		k := tablekit.Key("id", tablekit.String(fmt.Sprintf("o%02d", i)))
		cols := []tablekit.Column{
			{Name: "status", Value: tablekit.String(fmt.Sprintf("s%02d", n-i))},
			{Name: "total", Value: tablekit.Integer(int64(i))},
			{Name: "other", Value: tablekit.String("not included")},
		}
		if err := db.Table("shop").PutRow(ctx, k, cols); err != nil {
			t.Fatal(err)
		}
	}
}

// shopIndex is the state/total index of seedShop's table.
var shopIndex = tablekit.IndexSpec{Name: "by_status", Columns: []tablekit.KeyColumn{{Name: "status", Type: tablekit.TypeString}}, Include: []string{"total"}}

func createShop(t *testing.T, db *tablekit.Client) {
	t.Helper()
	m := tablekit.TableMeta{Name: "shop", Key: tableMeta("", "id:String").Key, Indexes: []tablekit.IndexSpec{shopIndex}}
	if err := db.CreateTable(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

// The index page's HTML: rows in index-key order with the index key's
// columns, links to the base rows, read-only even in a --write console.
func TestUIIndexPageHTML(t *testing.T) {
	t.Parallel()
	c, db := newTestConsole(t, consoleConfig{write: true}, "mem://")
	createShop(t, db)
	seedShop(t, db, 12)

	w := serve(c, get("/"))
	body := w.Body.String()
	if w.Code != 200 || !strings.Contains(body, `href="/t/shop/i/by_status"`) || !strings.Contains(body, "status:String") ||
		!strings.Contains(body, "+ total") || !strings.Contains(body, `class="state ready"`) {
		t.Fatalf("tables page: %d, the index is not listed with its columns, included columns and state:\n%s", w.Code, body)
	}

	w = serve(c, get("/t/shop/i/by_status?n=3"))
	body = w.Body.String()
	if w.Code != 200 {
		t.Fatalf("index page: %d\n%s", w.Code, body)
	}
	for _, want := range []string{
		`<th class="key">status</th><th class="key">id</th>`, // the index key's columns
		`<input name="p.status"`, `<input name="p.id"`,       // a prefix box each
		`<a href="/t/shop/row?key=id%3Do11">s01</a>`,              // first in index order, linked to its row
		`href="/t/shop/i/by_status?after=status%3Ds03%2Cid%3Do09`, // next page, after the third index key
		`action="/t/shop/i/by_status"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("index page lacks %s", want)
		}
	}
	if i, j := strings.Index(body, ">s01<"), strings.Index(body, ">s03<"); i < 0 || j < i || strings.Contains(body, ">s04<") {
		t.Errorf("index page: rows not s01..s03 in order")
	}
	if strings.Contains(body, `id="put"`) || strings.Contains(body, `id="import"`) || strings.Contains(body, "/export") || strings.Contains(body, "not included") {
		t.Errorf("index page: a write form, an export or a column the index does not include:\n%s", body)
	}

	// A prefix box, a filter on an included column, backward.
	w = serve(c, get("/t/shop/i/by_status?p.status=s1&filter=total+%3C+i%3A5&dir=backward"))
	var got []string
	for _, s := range []string{"s12", "s11", "s10"} {
		if i := strings.Index(w.Body.String(), ">"+s+"<"); i >= 0 {
			got = append(got, s)
		}
	}
	if w.Code != 200 || !slices.Equal(got, []string{"s12", "s11", "s10"}) || strings.Index(w.Body.String(), ">s12<") > strings.Index(w.Body.String(), ">s10<") || strings.Contains(w.Body.String(), ">s09<") {
		t.Fatalf("prefix s1, total < 5, backward: %d %v\n%s", w.Code, got, w.Body.String())
	}

	for target, code := range map[string]int{
		"/t/shop/i/nope":      400,
		"/t/none/i/by_status": 404,
		"/t/shop/i/by_status?filter=other+%3D%3D+s%3Ax": 400, // not in the index
		"/t/shop/i/by_status?p.id=o1":                   400, // a gap before id
	} {
		if w := serve(c, get(target)); w.Code != code {
			b, _ := io.ReadAll(w.Body)
			t.Errorf("GET %s: %d, want %d\n%s", target, w.Code, code, b)
		}
	}
}

// Paging over an index with next and previous links visits every row
// once, in index-key order, both ways.
func TestUIIndexPaging(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, db := newTestConsole(t, consoleConfig{}, "mem://")
	createShop(t, db)
	seedShop(t, db, 11)
	src, err := c.source(ctx, "shop", "by_status")
	if err != nil {
		t.Fatal(err)
	}
	var want []string // base keys in index order: o10 .. o00
	for i := 10; i >= 0; i-- {
		want = append(want, fmt.Sprintf("id=o%02d", i))
	}
	for _, backward := range []bool{false, true} {
		q := "n=4"
		w := slices.Clone(want)
		if backward {
			q += "&dir=backward"
			slices.Reverse(w)
		}
		var got []string
		var pages []*rowsPageData
		for next := "/t/shop/i/by_status?" + q; next != "" && len(pages) < 10; {
			u, _ := url.Parse(next)
			d, err := c.readRows(ctx, src, u.Query())
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, keysOf(d)...)
			pages = append(pages, d)
			next = d.Next
		}
		if !slices.Equal(got, w) || len(pages) != 3 {
			t.Fatalf("%s: %d pages visit %v, want %v", q, len(pages), got, w)
		}
		u, _ := url.Parse(pages[2].Prev)
		d, err := c.readRows(ctx, src, u.Query())
		if err != nil || !slices.Equal(keysOf(d), keysOf(pages[1])) {
			t.Fatalf("%s: previous of the last page: %v %v, want %v", q, keysOf(d), err, keysOf(pages[1]))
		}
	}
}

// The tables page says building while an index is filled.
func TestUIIndexState(t *testing.T) {
	m := &tablekit.TableMeta{Name: "t x", Key: tableMeta("", "id:String").Key, Indexes: []tablekit.IndexSpec{
		{Name: "a", Columns: []tablekit.KeyColumn{{Name: "id"}, {Name: "c", Type: tablekit.TypeInteger}}, State: tablekit.IndexWriteOnly},
		{Name: "b", Columns: []tablekit.KeyColumn{{Name: "c", Type: tablekit.TypeBinary}}, Include: []string{"x", "y"}, State: tablekit.IndexReady},
	}}
	got := indexesOf(m)
	want := []indexInfo{
		{Name: "a", Href: "/t/t%20x/i/a", Columns: "id:String, c:Integer", State: "building"},
		{Name: "b", Href: "/t/t%20x/i/b", Columns: "c:Binary", Include: "x, y", State: "ready"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("indexesOf: %+v, want %+v", got, want)
	}
}

// In the browser: a table with an index created by the form, rows put,
// the index listed, its page in index-key order, paged both ways, a
// prefix, and a row opened from it.
func TestUIBrowserIndexLocal(t *testing.T) {
	db := openURL(t, "mem://")
	base := serveConsole(t, db, "mem://")
	tab := browser(t)
	dir := artifactDir(t)
	act(t, tab, "create a table with an index",
		chromedp.Navigate(base+"/"), chromedp.WaitVisible("#create", chromedp.ByQuery),
		chromedp.SetValue(`#create input[name=name]`, "shop", chromedp.ByQuery),
		chromedp.SetValue(`#create input[name=key]`, "id:String", chromedp.ByQuery),
		chromedp.SetValue(`#create input[name=indexes]`, indexString(shopIndex), chromedp.ByQuery),
		navClick(`#create button`), chromedp.WaitVisible(`#rows`, chromedp.ByQuery))
	seedShop(t, db, 12)

	act(t, tab, "tables page", chromedp.Navigate(base+"/"), chromedp.WaitVisible("#tables a.iname", chromedp.ByQuery))
	if s := text(t, tab, "#tables td.indexes"); !strings.Contains(s, "by_status") || !strings.Contains(s, "status:String") || !strings.Contains(s, "total") || !strings.Contains(s, "ready") {
		t.Fatalf("tables page, indexes: %q", s)
	}
	act(t, tab, "open the index", navClick("#tables a.iname"), chromedp.WaitVisible("#rows", chromedp.ByQuery))
	if s := text(t, tab, "h1"); !strings.Contains(s, "by_status") {
		t.Fatalf("index page heading %q", s)
	}
	if s := text(t, tab, "#rows thead"); !strings.HasPrefix(strings.TrimSpace(s), "status") || !strings.Contains(s, "total") || strings.Contains(s, "other") {
		t.Fatalf("index page columns %q", s)
	}
	act(t, tab, "5 a page", chromedp.SetValue(`#query input[name=n]`, "5", chromedp.ByQuery), navClick("#apply"), chromedp.WaitVisible("#next", chromedp.ByQuery))
	if k := strings.Join(firstKeys(t, tab), " "); k != "s01 s02 s03 s04 s05" {
		t.Fatalf("index page 1: %q", k)
	}
	screenshot(t, tab, dir, "index")
	act(t, tab, "next page", navClick("#next"), chromedp.WaitVisible("#prev", chromedp.ByQuery))
	if k := strings.Join(firstKeys(t, tab), " "); k != "s06 s07 s08 s09 s10" {
		t.Fatalf("index page 2: %q", k)
	}
	act(t, tab, "next page", navClick("#next"), chromedp.WaitVisible("#prev", chromedp.ByQuery))
	if k := strings.Join(firstKeys(t, tab), " "); k != "s11 s12" {
		t.Fatalf("index page 3: %q", k)
	}
	act(t, tab, "previous page", navClick("#prev"), chromedp.WaitVisible("#next", chromedp.ByQuery))
	if k := strings.Join(firstKeys(t, tab), " "); k != "s06 s07 s08 s09 s10" {
		t.Fatalf("back to index page 2: %q", k)
	}
	act(t, tab, "prefix and backward",
		chromedp.SetValue(`#query input[name="p.status"]`, "s1", chromedp.ByQuery),
		chromedp.SetValue(`#query select[name=dir]`, "backward", chromedp.ByQuery),
		navClick("#apply"), chromedp.WaitVisible("#rows", chromedp.ByQuery))
	if k := strings.Join(firstKeys(t, tab), " "); k != "s12 s11 s10" {
		t.Fatalf("prefix s1, backward: %q", k)
	}
	act(t, tab, "open a row from the index", navClick("#rows tbody tr:first-child td.key a"), chromedp.WaitVisible("#versions", chromedp.ByQuery))
	if got := text(t, tab, "#key"); got != "id=o00" {
		t.Fatalf("the index row s12 opened row %q, want id=o00", got)
	}
}
