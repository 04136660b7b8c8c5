package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable/bttest"
	"github.com/chromedp/chromedp"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/dynalitetest"
)

// The console in a real browser: headless Chromium from the machine's
// packages, driven over the DevTools protocol (chromedp, a test-only
// import). One browser serves every test of the binary, a tab each.

var (
	browserOnce   sync.Once
	browserCtx    context.Context
	browserCancel context.CancelFunc
	browserErr    error
)

// stopBrowser ends the shared browser (TestMain, after the tests).
func stopBrowser() {
	if browserCancel != nil {
		browserCancel()
	}
}

// browser returns a new tab of the shared browser, closed when t ends. A
// missing chromium skips the test, or fails it under CI=true.
func browser(t *testing.T) context.Context {
	t.Helper()
	browserOnce.Do(func() {
		path, err := exec.LookPath("chromium")
		if err != nil {
			browserErr = fmt.Errorf("chromium is not installed (apt-get install chromium): %v", err)
			return
		}
		dir, err := os.MkdirTemp(tmpRoot, "chromium-profile")
		if err != nil {
			browserErr = err
			return
		}
		actx, acancel := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(path),
			chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.UserDataDir(dir),
			chromedp.WindowSize(1280, 800),
		)
		bctx, bcancel := chromedp.NewContext(actx)
		if err := chromedp.Run(bctx); err != nil { // starts the browser
			bcancel()
			acancel()
			browserErr = fmt.Errorf("starting chromium: %v", err)
			return
		}
		browserCtx = bctx
		browserCancel = func() { bcancel(); acancel() }
	})
	if browserErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(browserErr)
		}
		t.Skip(browserErr)
	}
	tab, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	tab, cancelT := context.WithTimeout(tab, 90*time.Second)
	t.Cleanup(cancelT)
	return tab
}

// artifactDir is where screenshots go: $TABLEKIT_ARTIFACTS, else the
// test's temporary directory.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("TABLEKIT_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// screenshot saves the page as NAME.png among the test's artifacts.
func screenshot(t *testing.T, tab context.Context, dir, name string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(tab, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+"-"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// serveConsole serves a read-write console of db at url (as shown).
func serveConsole(t *testing.T, db *tablekit.Client, url string) string {
	t.Helper()
	c, err := newConsole(db, &env{url: url}, consoleConfig{write: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return srv.URL
}

// act runs the actions on the tab, failing the test with what step.
func act(t *testing.T, tab context.Context, step string, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(tab, actions...); err != nil {
		var loc, body string
		chromedp.Run(tab, chromedp.Location(&loc), chromedp.Text("body", &body, chromedp.ByQuery))
		t.Fatalf("%s: %v\nat %s\n%s", step, err, loc, body)
	}
}

// navClick clicks sel and waits for the page it leads to (a link or a
// form's submit button, redirects followed).
func navClick(sel string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := chromedp.RunResponse(ctx, chromedp.Click(sel, chromedp.ByQuery))
		return err
	})
}

// text is the text of the first node sel matches.
func text(t *testing.T, tab context.Context, sel string) string {
	t.Helper()
	var s string
	act(t, tab, "text of "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
	return s
}

// firstKeys is the first key column of every row of the rows grid.
func firstKeys(t *testing.T, tab context.Context) []string {
	t.Helper()
	var keys []string
	act(t, tab, "rows grid", chromedp.Evaluate(`Array.from(document.querySelectorAll("#rows tbody tr td.key a")).map(a => a.textContent)`, &keys))
	return keys
}

func rowKey(i int) tablekit.PrimaryKey {
	return tablekit.Key("id", tablekit.String(fmt.Sprintf("r%02d", i))).Add("n", tablekit.Integer(int64(i)))
}

// seedRows puts rows r00..r(n-1) of table orders, status paid on every
// third, and wide rows: 12 columns, one a long value.
func seedRows(t *testing.T, db *tablekit.Client, from, n int) {
	t.Helper()
	var writes []tablekit.BatchWrite
	for i := from; i < n; i++ {
		status := "open"
		if i%3 == 0 {
			status = "paid"
		}
		cols := []tablekit.Column{
			{Name: "status", Value: tablekit.String(status)},
			{Name: "total", Value: tablekit.Double(float64(i) + 0.5)},
			{Name: "qty", Value: tablekit.Integer(int64(i) * 1_000_000_007)},
			{Name: "blob", Value: tablekit.Binary([]byte{0, 0xff, byte(i)})},
			{Name: "note", Value: tablekit.String(strings.Repeat("long text ", 20))},
		}
		for c := range 7 {
			cols = append(cols, tablekit.Column{Name: fmt.Sprintf("x%d", c), Value: tablekit.Integer(int64(c))})
		}
		writes = append(writes, tablekit.BatchPut("orders", rowKey(i), cols))
	}
	res, err := db.BatchWriteRow(context.Background(), writes)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
}

// browseScenario: the tables page, a table created in the browser (or by
// the client, create false), rows put, paging forward and back, a filter.
func browseScenario(t *testing.T, tab context.Context, db *tablekit.Client, base, dir string, create bool) {
	ctx := context.Background()
	act(t, tab, "tables page", chromedp.Navigate(base+"/"), chromedp.WaitVisible("#tables", chromedp.ByQuery))
	if h := text(t, tab, "h1"); h != "Tables" {
		t.Fatalf("tables page heading %q", h)
	}
	if !strings.Contains(text(t, tab, ".caps"), "change feed") {
		t.Fatal("the tables page shows no capabilities")
	}
	feed := db.Capabilities().ChangeFeed
	if create {
		actions := []chromedp.Action{
			chromedp.SetValue(`#create input[name=name]`, "orders", chromedp.ByQuery),
			chromedp.SetValue(`#create input[name=key]`, "id:String,n:Integer", chromedp.ByQuery),
			chromedp.SetValue(`#create input[name=versions]`, "3", chromedp.ByQuery),
		}
		if feed {
			actions = append(actions, chromedp.Click(`#create input[name=feed]`, chromedp.ByQuery))
		}
		actions = append(actions, navClick(`#create button`), chromedp.WaitVisible(`#rows`, chromedp.ByQuery))
		act(t, tab, "create a table", actions...)
		m, err := db.DescribeTable(ctx, "orders")
		if err != nil || m.Options.MaxVersions != 3 || schemaString(m.Key) != "id:String,n:Integer" {
			t.Fatalf("the table the form created: %+v, %v", m, err)
		}
		// Put rows in the browser, then the rest with the client.
		for i := range 2 {
			act(t, tab, "put a row",
				chromedp.Navigate(base+"/t/orders"), chromedp.WaitVisible("#put", chromedp.ByQuery),
				chromedp.SetValue(`#put input[name=key]`, formatKey(rowKey(i)), chromedp.ByQuery),
				chromedp.SetValue(`#put textarea[name=cols]`, "status=s:paid\ntotal=d:1.5", chromedp.ByQuery),
				navClick(`#put button`), chromedp.WaitVisible("#versions", chromedp.ByQuery))
			if got := text(t, tab, "#key"); got != formatKey(rowKey(i)) {
				t.Fatalf("put led to row %q", got)
			}
		}
		seedRows(t, db, 2, 30)
	} else {
		if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "orders", Key: tableMeta("", "id:String,n:Integer").Key, Options: tablekit.TableOptions{MaxVersions: 3}}); err != nil {
			t.Fatal(err)
		}
		seedRows(t, db, 0, 30)
	}
	act(t, tab, "tables page lists orders", chromedp.Navigate(base+"/"), chromedp.WaitVisible("#tables a.tname", chromedp.ByQuery))
	if got := text(t, tab, "#tables tbody"); !strings.Contains(got, "orders") || !strings.Contains(got, "id:String,n:Integer") {
		t.Fatalf("tables page: %q", got)
	}
	screenshot(t, tab, dir, "tables")

	// Page forward and back, ten rows a page.
	act(t, tab, "rows page", chromedp.Navigate(base+"/t/orders?n=10"), chromedp.WaitVisible("#rows", chromedp.ByQuery))
	if k := firstKeys(t, tab); len(k) != 10 || k[0] != "r00" || k[9] != "r09" {
		t.Fatalf("first page: %v", k)
	}
	if s := text(t, tab, "#rows thead"); !strings.Contains(s, "blob") || strings.Contains(s, "x6") {
		t.Fatalf("wide rows: the grid shows %q (want the first %d columns)", s, uiShownColumns)
	}
	if s := text(t, tab, "#rows tbody"); !strings.Contains(s, "+4 columns") || !strings.Contains(s, "show all") || !strings.Contains(s, "i:3000000021") || !strings.Contains(s, "b:0x00ff03") {
		t.Fatalf("rows grid: collapsed columns, truncation or typed values missing:\n%s", s)
	}
	screenshot(t, tab, dir, "rows")
	act(t, tab, "next page", navClick("#next"), chromedp.WaitVisible("#prev", chromedp.ByQuery))
	if k := firstKeys(t, tab); len(k) != 10 || k[0] != "r10" {
		t.Fatalf("second page: %v", k)
	}
	act(t, tab, "next page", navClick("#next"), chromedp.WaitVisible("#prev", chromedp.ByQuery))
	if k := firstKeys(t, tab); len(k) != 10 || k[0] != "r20" || k[9] != "r29" {
		t.Fatalf("third page: %v", k)
	}
	act(t, tab, "previous page", navClick("#prev"), chromedp.WaitVisible("#next", chromedp.ByQuery))
	if k := firstKeys(t, tab); len(k) != 10 || k[0] != "r10" || k[9] != "r19" {
		t.Fatalf("back to the second page: %v", k)
	}
	// Truncated value: shown whole on demand.
	act(t, tab, "show all", chromedp.Click("#rows a.more", chromedp.ByQuery), chromedp.WaitNotPresent("#rows tbody tr:first-child a.more", chromedp.ByQuery))

	// A filter in the CLI's language, backward, with a key prefix.
	act(t, tab, "filter",
		chromedp.Navigate(base+"/t/orders"), chromedp.WaitVisible("#filter", chromedp.ByQuery),
		chromedp.SetValue("#filter", "status == s:paid", chromedp.ByQuery),
		chromedp.SetValue(`#query input[name="p.id"]`, "r1", chromedp.ByQuery),
		chromedp.SetValue(`#query select[name=dir]`, "backward", chromedp.ByQuery),
		navClick("#apply"), chromedp.WaitVisible("#rows", chromedp.ByQuery))
	if k := strings.Join(firstKeys(t, tab), " "); k != "r18 r15 r12" {
		t.Fatalf("filter status == s:paid, prefix id=r1, backward: rows %q", k)
	}
	act(t, tab, "bad filter", chromedp.Navigate(base+"/t/orders?filter=status+%3D%3D"), chromedp.WaitVisible("#error", chromedp.ByQuery))
	if s := text(t, tab, "#error"); !strings.Contains(s, "filter") {
		t.Fatalf("a bad filter's message: %q", s)
	}
}

// editScenario: a row's three versions, an edit made with a stale page
// refused with a conflict, then made on the fresh page.
func editScenario(t *testing.T, tab context.Context, db *tablekit.Client, base, dir string) {
	ctx := context.Background()
	tbl := db.Table("orders")
	k := tablekit.Key("id", tablekit.String("v1")).Add("n", tablekit.Integer(1))
	now := time.Now().UnixMilli()
	if err := tbl.PutRow(ctx, k, []tablekit.Column{
		{Name: "status", Value: tablekit.String("new"), Version: now - 2000},
		{Name: "status", Value: tablekit.String("paid"), Version: now - 1000},
		{Name: "status", Value: tablekit.String("shipped"), Version: now},
	}); err != nil {
		t.Fatal(err)
	}
	page := base + "/t/orders/row?key=" + strings.ReplaceAll(formatKey(k), ",", "%2C")
	act(t, tab, "row page", chromedp.Navigate(page), chromedp.WaitVisible("#versions", chromedp.ByQuery))
	var vers []string
	act(t, tab, "versions", chromedp.Evaluate(`Array.from(document.querySelectorAll("#versions td.ver")).map(td => td.textContent)`, &vers))
	if len(vers) != 3 || vers[0] != fmt.Sprint(now) || vers[2] != fmt.Sprint(now-2000) {
		t.Fatalf("row page versions %v, want 3 newest first", vers)
	}
	if s := text(t, tab, "#versions tbody"); !strings.Contains(s, "shipped") || !strings.Contains(s, "new") || !strings.Contains(s, time.UnixMilli(now).UTC().Format("2006-01-02 15:04:05")) {
		t.Fatalf("row page: %q", s)
	}
	screenshot(t, tab, dir, "row")
	// Someone else writes the row while the page is open.
	if _, err := tbl.UpdateRow(ctx, k, []tablekit.Change{tablekit.Put("status", tablekit.String("returned"))}); err != nil {
		t.Fatal(err)
	}
	act(t, tab, "stale edit",
		chromedp.SetValue(`form.edit-col input[name=value]`, "s:cancelled", chromedp.ByQuery),
		navClick(`form.edit-col button`), chromedp.WaitVisible("#error", chromedp.ByQuery))
	if s := text(t, tab, "#error"); !strings.Contains(s, "Conflict") || !strings.Contains(s, "nothing was written") {
		t.Fatalf("stale edit: %q", s)
	}
	screenshot(t, tab, dir, "conflict")
	if row, _, err := tbl.GetRow(ctx, k); err != nil || func() string { v, _ := row.Get("status"); s, _ := v.Str(); return s }() != "returned" {
		t.Fatalf("after the refused edit the row is %v, %v", row, err)
	}
	// The page now shows the row as it is: the same edit goes through.
	act(t, tab, "fresh edit",
		chromedp.SetValue(`form.edit-col input[name=value]`, "s:cancelled", chromedp.ByQuery),
		navClick(`form.edit-col button`), chromedp.WaitVisible("#versions", chromedp.ByQuery),
		chromedp.WaitNotPresent("#error", chromedp.ByQuery))
	if s := text(t, tab, "#versions td.v"); s != "cancelled" {
		t.Fatalf("after the edit the newest value is %q", s)
	}
	act(t, tab, "delete a version", navClick(`#versions tr:nth-child(2) button[value=delete_version]`),
		chromedp.WaitVisible("#versions", chromedp.ByQuery))
	var n int
	act(t, tab, "versions left", chromedp.Evaluate(`document.querySelectorAll("#versions td.ver").length`, &n))
	if n != 2 { // MaxVersions 3: cancelled, returned, shipped; minus returned
		t.Fatalf("after deleting a version %d are shown, want 2", n)
	}
}

// feedScenario: a write appears in the live tail, not before it started.
func feedScenario(t *testing.T, tab context.Context, db *tablekit.Client, base, dir string) {
	ctx := context.Background()
	tbl := db.Table("orders")
	if st, err := tbl.ChangeFeed(ctx); err != nil || !st.Enabled {
		t.Fatalf("the table created with a feed has none: %+v %v", st, err)
	}
	act(t, tab, "feed page", chromedp.Navigate(base+"/t/orders/feed"), chromedp.WaitVisible("#start", chromedp.ByQuery),
		chromedp.Click("#start", chromedp.ByQuery), chromedp.WaitVisible(`#tail[data-live="1"]`, chromedp.ByQuery))
	k := tablekit.Key("id", tablekit.String("<b>tail</b>")).Add("n", tablekit.Integer(7))
	if err := tbl.PutRow(ctx, k, []tablekit.Column{{Name: "status", Value: tablekit.String("fresh")}}); err != nil {
		t.Fatal(err)
	}
	act(t, tab, "the write in the tail", chromedp.Poll(`document.querySelector("#records tbody").textContent.includes("<b>tail</b>")`, nil, chromedp.WithPollingTimeout(30*time.Second)))
	if s := text(t, tab, "#records tbody"); strings.Contains(s, "r00") || !strings.Contains(s, `status="fresh"@`) {
		t.Fatalf("the tail from now shows %q", s)
	}
	// Pause, write, resume: the write made while paused arrives.
	act(t, tab, "pause", chromedp.Click("#pause", chromedp.ByQuery), chromedp.WaitNotPresent(`#tail[data-live="1"]`, chromedp.ByQuery))
	if err := tbl.PutRow(ctx, k.Clone(), []tablekit.Column{{Name: "status", Value: tablekit.String("while-paused")}}); err != nil {
		t.Fatal(err)
	}
	act(t, tab, "resume", chromedp.Click("#pause", chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#records tbody").textContent.includes("while-paused")`, nil, chromedp.WithPollingTimeout(30*time.Second)))
	screenshot(t, tab, dir, "feed")
}

// fullScenarios runs every scenario against db.
func fullScenarios(t *testing.T, db *tablekit.Client, url string) {
	base := serveConsole(t, db, url) // closed after the tab (cleanups run last first)
	tab := browser(t)
	dir := artifactDir(t)
	browseScenario(t, tab, db, base, dir, true)
	editScenario(t, tab, db, base, dir)
	if db.Capabilities().ChangeFeed {
		feedScenario(t, tab, db, base, dir)
	} else {
		t.Errorf("%s declares no change feed: the feed scenario did not run", url)
	}
}

func openURL(t *testing.T, url string) *tablekit.Client {
	t.Helper()
	db, err := tablekit.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestUIBrowserLocal(t *testing.T) {
	fullScenarios(t, openURL(t, "mem://"), "mem://")
}

func TestUIBrowserFile(t *testing.T) {
	url := fileURL(t)
	fullScenarios(t, openURL(t, url), url)
}

// The Tablestore emulator binary, over HTTP.
func TestUIBrowserTablestoreEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the emulator binary")
	}
	url := startEmulator(t, "mem://")
	fullScenarios(t, openE2E(t, url), url)
}

// Bigtable (bttest) and DynamoDB (dynalite): the tables and rows pages.
func TestUIBrowserBigtable(t *testing.T) {
	srv, err := bttest.NewServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	t.Setenv("BIGTABLE_EMULATOR_HOST", srv.Addr)
	url := "bigtable://p/i"
	db := openURL(t, url)
	base := serveConsole(t, db, url)
	browseScenario(t, browser(t), db, base, artifactDir(t), false)
}

func TestUIBrowserDynamoDB(t *testing.T) {
	endpoint := dynalitetest.Start(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	url := "dynamodb://?region=" + dynalitetest.Region + "&endpoint=" + endpoint
	db := openURL(t, url)
	base := serveConsole(t, db, url)
	browseScenario(t, browser(t), db, base, artifactDir(t), false)
}
