package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tablekit/tablekit"
)

// newTestConsole is a console of a new mem:// store.
func newTestConsole(t *testing.T, cfg consoleConfig, shownURL string) (*console, *tablekit.Client) {
	t.Helper()
	db := openURL(t, "mem://")
	c, err := newConsole(db, &env{url: shownURL}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, db
}

// serve runs one request through the console.
func serve(c *console, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	c.ServeHTTP(w, r)
	return w
}

func get(target string) *http.Request {
	r := httptest.NewRequest("GET", target, nil)
	r.RemoteAddr = "127.0.0.1:50000"
	r.Host = "127.0.0.1:7733"
	return r
}

func post(target string, form url.Values) *http.Request {
	r := httptest.NewRequest("POST", target, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = "127.0.0.1:50000"
	r.Host = "127.0.0.1:7733"
	return r
}

// Without --listen only loopback clients naming a loopback host are
// served; with a token every request must carry it.
func TestUIRefusesRemoteWithoutToken(t *testing.T) {
	t.Parallel()
	c, _ := newTestConsole(t, consoleConfig{}, "mem://")
	if w := serve(c, get("/")); w.Code != 200 {
		t.Fatalf("loopback: %d %s", w.Code, w.Body)
	}
	r := get("/")
	r.RemoteAddr = "203.0.113.9:4000"
	if w := serve(c, r); w.Code != 403 || !strings.Contains(w.Body.String(), "loopback clients only") {
		t.Fatalf("a remote client: %d %s", w.Code, w.Body)
	}
	r = get("/")
	r.Host = "rebound.example:7733" // DNS rebinding: a page of another site aimed at loopback
	if w := serve(c, r); w.Code != 403 {
		t.Fatalf("a foreign Host header: %d", w.Code)
	}

	tc, _ := newTestConsole(t, consoleConfig{token: "s3cret"}, "mem://")
	remote := func(target string, cookie *http.Cookie) *httptest.ResponseRecorder {
		r := get(target)
		r.RemoteAddr, r.Host = "203.0.113.9:4000", "console.example:7733"
		if cookie != nil {
			r.AddCookie(cookie)
		}
		return serve(tc, r)
	}
	if w := remote("/", nil); w.Code != 403 || !strings.Contains(w.Body.String(), "access token") {
		t.Fatalf("remote without the token: %d %s", w.Code, w.Body)
	}
	if w := remote("/?token=guess", nil); w.Code != 403 {
		t.Fatalf("remote with a wrong token: %d", w.Code)
	}
	w := remote("/?token=s3cret", nil)
	if w.Code != 200 {
		t.Fatalf("remote with the token: %d %s", w.Code, w.Body)
	}
	var ck *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == uiTokenCookie {
			ck = c
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
		t.Fatalf("the token's cookie: %+v", ck)
	}
	if w := remote("/", ck); w.Code != 200 {
		t.Fatalf("remote with the cookie: %d", w.Code)
	}
	if ok, _ := loopbackAddr("0.0.0.0:7733"); ok {
		t.Fatal("0.0.0.0 taken for loopback")
	}
	if ok, _ := loopbackAddr("localhost:7733"); !ok {
		t.Fatal("localhost not taken for loopback")
	}
}

// Every POST needs the page's CSRF token and, when the browser says where
// it comes from, the console's own origin; a read-only console refuses
// writes even with the token.
func TestUIRefusesForgedPost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, db := newTestConsole(t, consoleConfig{write: true}, "mem://")
	form := url.Values{"name": {"t"}, "key": {"id:String"}}
	for _, tc := range []struct {
		name   string
		csrf   string
		origin string
	}{
		{"no token", "", ""},
		{"a wrong token", "0000", ""},
		{"another origin", c.csrf, "http://evil.example"},
	} {
		f := url.Values{"csrf": {tc.csrf}}
		for k, v := range form {
			f[k] = v
		}
		r := post("/tables/create", f)
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if w := serve(c, r); w.Code != 403 {
			t.Errorf("%s: %d %s", tc.name, w.Code, w.Body)
		}
	}
	if names, _ := db.ListTables(ctx); len(names) != 0 {
		t.Fatalf("a forged POST created %v", names)
	}
	// An upload without the token is refused before it is read.
	if w := serve(c, post("/import", url.Values{})); w.Code != 403 {
		t.Fatalf("import without the token: %d", w.Code)
	}
	form.Set("csrf", c.csrf)
	r := post("/tables/create", form)
	r.Header.Set("Origin", "http://127.0.0.1:7733")
	if w := serve(c, r); w.Code != http.StatusSeeOther {
		t.Fatalf("a POST with the token: %d %s", w.Code, w.Body)
	}
	ro, rodb := newTestConsole(t, consoleConfig{}, "mem://")
	form.Set("csrf", ro.csrf)
	if w := serve(ro, post("/tables/create", form)); w.Code != 403 || !strings.Contains(w.Body.String(), "read-only") {
		t.Fatalf("read-only console: %d %s", w.Code, w.Body)
	}
	if names, _ := rodb.ListTables(ctx); len(names) != 0 {
		t.Fatalf("a read-only console created %v", names)
	}
	// A body over the limit is refused, nothing written.
	big := url.Values{"csrf": {c.csrf}, "key": {"id=a"}, "cols": {"v=s:" + strings.Repeat("x", uiFormLimit)}}
	if w := serve(c, post("/t/t/put", big)); w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("an oversized form: %d", w.Code)
	}
	if _, found, _ := db.Table("t").GetRow(ctx, tablekit.Key("id", tablekit.String("a"))); found {
		t.Fatal("an oversized form wrote its row")
	}
}

// Names and values are shown as text, never as markup; the URL is shown
// without user information or query.
func TestUIHostileInputRendersAsText(t *testing.T) {
	ctx := context.Background()
	secretURL := "dynamodb://admin:hunter2@localhost/?region=x&secret_key=hunter2"
	c, db := newTestConsole(t, consoleConfig{write: true}, secretURL)
	for _, path := range []string{"/"} {
		if b := serve(c, get(path)).Body.String(); strings.Contains(b, "hunter2") || strings.Contains(b, "admin") {
			t.Fatalf("%s shows a credential of the URL:\n%s", path, b)
		}
	}
	// A table name and a column name with markup: refused, the message
	// escaped.
	w := serve(c, post("/tables/create", url.Values{"csrf": {c.csrf}, "name": {"<script>alert(1)</script>"}, "key": {"id:String"}}))
	if w.Code != 400 || strings.Contains(w.Body.String(), "<script>alert") || !strings.Contains(w.Body.String(), "&lt;script&gt;") {
		t.Fatalf("a table name with markup: %d\n%s", w.Code, w.Body)
	}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "h", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}}); err != nil {
		t.Fatal(err)
	}
	w = serve(c, post("/t/h/put", url.Values{"csrf": {c.csrf}, "key": {"id=a"}, "cols": {"<img src=x onerror=alert(1)>=s:x"}}))
	if w.Code != 400 || strings.Contains(w.Body.String(), "<img") {
		t.Fatalf("a column name with markup: %d\n%s", w.Code, w.Body)
	}
	evilKey := `<script>window.__pwned=1</script>`
	evilVal := `<img src=x onerror="window.__pwned=2">` + strings.Repeat("y", 100)
	k := tablekit.Key("id", tablekit.String(evilKey))
	if err := db.Table("h").PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.String(evilVal)}}); err != nil {
		t.Fatal(err)
	}
	// In the browser: nothing runs, the text is there.
	base := serveConsole(t, db, secretURL)
	tab := browser(t)
	for _, page := range []string{"/t/h", "/t/h/row?key=" + url.QueryEscape(formatKey(k))} {
		var pwned bool
		var imgs int
		var body string
		act(t, tab, "hostile page "+page, chromedp.Navigate(base+page), chromedp.WaitVisible("main", chromedp.ByQuery),
			chromedp.Evaluate(`window.__pwned !== undefined`, &pwned),
			chromedp.Evaluate(`document.querySelectorAll("main img, main script").length`, &imgs),
			chromedp.Text("main", &body, chromedp.ByQuery))
		if pwned || imgs != 0 || !strings.Contains(body, evilKey) || !strings.Contains(body, `<img src=x onerror="window.__pwned=2">`) {
			t.Fatalf("%s: script ran %v, %d elements injected, text:\n%s", page, pwned, imgs, body)
		}
	}
	// The whole value on demand is text too.
	act(t, tab, "show all", chromedp.Navigate(base+"/t/h"), chromedp.WaitVisible("#rows a.more", chromedp.ByQuery),
		chromedp.Click("#rows a.more", chromedp.ByQuery), chromedp.WaitNotPresent("#rows a.more", chromedp.ByQuery))
	var pwned bool
	var full string
	act(t, tab, "after show all", chromedp.Evaluate(`window.__pwned !== undefined`, &pwned), chromedp.Text("#rows td.full", &full, chromedp.ByQuery))
	if pwned || full != evilVal {
		t.Fatalf("show all: script ran %v, text %q", pwned, full)
	}
}

// Following next links and then previous links visits every row once,
// in order, forward and backward, with a prefix and a filter.
func TestUIRowsPagingVisitsEveryRowOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, db := newTestConsole(t, consoleConfig{}, "mem://")
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "p", Key: tablekit.KeySchema{{Name: "a", Type: tablekit.TypeString}, {Name: "b", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, a := range []string{"a", "ab", "abc", "b"} {
		for b := range 9 {
			k := tablekit.Key("a", tablekit.String(a)).Add("b", tablekit.Integer(int64(b)))
			if err := db.Table("p").PutRow(ctx, k, []tablekit.Column{{Name: "odd", Value: tablekit.Boolean(b%2 == 1)}}); err != nil {
				t.Fatal(err)
			}
			all = append(all, formatKey(k))
		}
	}
	for _, tc := range []struct {
		query string
		want  func(k string) bool
	}{
		{"n=4", func(string) bool { return true }},
		{"n=5&p.a=ab", func(k string) bool { return strings.HasPrefix(k, "a=ab") }},
		{"n=3&p.a=ab&p.b=3", func(k string) bool { return strings.HasPrefix(k, "a=ab,") && strings.HasSuffix(k, "b=3") }},
		{"n=2&p.a=a&filter=odd+%3D%3D+bool%3Atrue", func(k string) bool {
			return strings.HasPrefix(k, "a=a") && strings.ContainsAny(k[len(k)-1:], "1357")
		}},
	} {
		for _, backward := range []bool{false, true} {
			q := tc.query
			want := slices.DeleteFunc(slices.Clone(all), func(k string) bool { return !tc.want(k) })
			if backward {
				q += "&dir=backward"
				slices.Reverse(want)
			}
			var got []string
			var pages []*rowsPageData
			next := "/t/p?" + q
			for next != "" && len(pages) < 50 {
				u, _ := url.Parse(next)
				d, err := c.rowsData(ctx, "p", u.Query())
				if err != nil {
					t.Fatalf("%s: %v", next, err)
				}
				for _, r := range d.Rows {
					got = append(got, r.Key)
				}
				pages = append(pages, d)
				next = d.Next
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: next links visit\n%v\nwant\n%v", q, got, want)
			}
			// And back: previous links from the last page.
			var back []string
			prev := pages[len(pages)-1].Prev
			for i := len(pages) - 2; prev != ""; i-- {
				u, _ := url.Parse(prev)
				d, err := c.rowsData(ctx, "p", u.Query())
				if err != nil {
					t.Fatal(err)
				}
				var keys []string
				for _, r := range d.Rows {
					keys = append(keys, r.Key)
				}
				var wantKeys []string
				for _, r := range pages[i].Rows {
					wantKeys = append(wantKeys, r.Key)
				}
				if !slices.Equal(keys, wantKeys) {
					t.Fatalf("%s: previous page %v, want %v", q, keys, wantKeys)
				}
				back = append(keys, back...)
				prev = d.Prev
			}
			if len(pages) > 1 && !slices.Equal(append(back, keysOf(pages[len(pages)-1])...), want) {
				t.Fatalf("%s: previous links visit %v", q, back)
			}
		}
	}
	if _, err := c.rowsData(ctx, "p", url.Values{"p.b": {"1"}}); err == nil || !strings.Contains(err.Error(), "without a gap") {
		t.Fatalf("a prefix with a gap: %v", err)
	}
	if _, err := c.rowsData(ctx, "p", url.Values{"filter": {"a == s:x"}}); err == nil || !strings.Contains(err.Error(), "key column") {
		t.Fatalf("a filter on a key column: %v", err)
	}
}

func keysOf(d *rowsPageData) []string {
	var out []string
	for _, r := range d.Rows {
		out = append(out, r.Key)
	}
	return out
}

// Export downloads the CLI's JSON lines; importing them through another
// console (an upload, run in the background with a progress status)
// makes the same table.
func TestUIExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, sdb := newTestConsole(t, consoleConfig{}, "mem://")
	if err := sdb.CreateTable(ctx, tablekit.TableMeta{Name: "x", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}, Options: tablekit.TableOptions{MaxVersions: 2}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	for i := range 250 {
		if err := sdb.Table("x").PutRow(ctx, tablekit.Key("id", tablekit.String(fmt.Sprintf("k%03d", i))), []tablekit.Column{
			{Name: "n", Value: tablekit.Integer(int64(i)), Version: now}, {Name: "n", Value: tablekit.Double(0.5), Version: now - 1},
		}); err != nil {
			t.Fatal(err)
		}
	}
	w := serve(src, get("/t/x/export"))
	if w.Code != 200 || !strings.Contains(w.Header().Get("Content-Disposition"), "x.jsonl") {
		t.Fatalf("export: %d %v", w.Code, w.Header())
	}
	exported := w.Body.String()
	var cli bytes.Buffer
	if err := exportTable(ctx, sdb, func() *tablekit.TableMeta { m, _ := sdb.DescribeTable(ctx, "x"); return &m }(), &cli); err != nil || cli.String() != exported {
		t.Fatalf("the console's export differs from the CLI's (%v)", err)
	}

	dst, ddb := newTestConsole(t, consoleConfig{write: true}, "mem://")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "x.jsonl")
	io.WriteString(fw, exported)
	mw.Close()
	r := httptest.NewRequest("POST", "/import?csrf="+dst.csrf, &body)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	r.RemoteAddr, r.Host = "127.0.0.1:1", "localhost:7733"
	w = serve(dst, r)
	if w.Code != http.StatusSeeOther || !regexp.MustCompile(`^/jobs/[0-9a-f]+$`).MatchString(w.Header().Get("Location")) {
		t.Fatalf("import: %d %s", w.Code, w.Body)
	}
	job := w.Header().Get("Location")
	var st jobStatus
	for deadline := time.Now().Add(30 * time.Second); ; {
		if err := json.Unmarshal(serve(dst, get(job+"/status")).Body.Bytes(), &st); err != nil {
			t.Fatal(err)
		}
		if st.Done || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !st.Done || st.Error != "" || st.Rows != 250 || st.Total != 251 {
		t.Fatalf("import job: %+v", st)
	}
	if page := serve(dst, get(job)).Body.String(); !strings.Contains(page, "<progress") {
		t.Fatalf("job page: %s", page)
	}
	var again bytes.Buffer
	m, err := ddb.DescribeTable(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := exportTable(ctx, ddb, &m, &again); err != nil || again.String() != exported {
		t.Fatalf("the imported table differs (%v)", err)
	}
}

// The rows page shows typed values by type, and a page never holds more
// than one page of rows (n is bounded).
func TestUIRowsPageTypedValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, db := newTestConsole(t, consoleConfig{}, "mem://")
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "v", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeBinary}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Table("v").PutRow(ctx, tablekit.Key("id", tablekit.Binary([]byte{0, 0xfe})), []tablekit.Column{
		{Name: "i", Value: tablekit.Integer(9007199254740993)}, // above 2^53: exact, not a float
		{Name: "d", Value: tablekit.Double(1.5)},
		{Name: "b", Value: tablekit.Boolean(true)},
		{Name: "bin", Value: tablekit.Binary([]byte{1, 2, 3})},
		{Name: "s", Value: tablekit.String("i:7")}, // a String that looks typed is still a String
	}); err != nil {
		t.Fatal(err)
	}
	b := html.UnescapeString(serve(c, get("/t/v")).Body.String())
	for _, want := range []string{">0x00fe<", `class="v Integer">i:9007199254740993<`, `class="v Double">d:1.5<`, `class="v Boolean">bool:true<`,
		`class="v Binary" title="base64: AQID">b:0x010203<`, `class="v String">i:7<`} {
		if !strings.Contains(b, want) {
			t.Errorf("rows page lacks %s", want)
		}
	}
	if w := serve(c, get(fmt.Sprintf("/t/v?n=%d", uiMaxPage+1))); w.Code != 400 {
		t.Fatalf("n over the page bound: %d", w.Code)
	}
}

// The command serves on loopback and prints the address; with --listen
// on every interface it prints an address with the access token, and a
// request without it is refused.
func TestUICommand(t *testing.T) {
	t.Parallel()
	start := func(args ...string) string {
		cmd := exec.Command(tkBinary, append([]string{"ui", "mem://"}, args...)...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "open "); ok {
				go io.Copy(io.Discard, out)
				return addr
			}
		}
		t.Fatalf("tablekit ui %v printed no address", args)
		return ""
	}
	status := func(u string) int {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	addr := start("--listen", "127.0.0.1:0")
	if !strings.HasPrefix(addr, "http://127.0.0.1:") || strings.Contains(addr, "token") || status(addr) != 200 {
		t.Fatalf("loopback: %q", addr)
	}
	addr = start("--listen", "0.0.0.0:0")
	u, err := url.Parse(addr)
	if err != nil || u.Query().Get("token") == "" {
		t.Fatalf("--listen 0.0.0.0:0 printed %q", addr)
	}
	port := u.Port()
	if got := status("http://127.0.0.1:" + port + "/"); got != 403 {
		t.Fatalf("without the token: %d", got)
	}
	if got := status("http://127.0.0.1:" + port + "/?token=" + u.Query().Get("token")); got != 200 {
		t.Fatalf("with the token: %d", got)
	}
}

// The row page shows every version with its time and, under a TTL, the
// second it expires (SPEC §6: visible while v_s + TTL > now_s).
func TestUIRowPageShowsExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, db := newTestConsole(t, consoleConfig{}, "mem://")
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "e", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}},
		Options: tablekit.TableOptions{TTL: 86400 * time.Second, MaxVersions: 2}}); err != nil {
		t.Fatal(err)
	}
	v := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli() + 999
	if err := db.Table("e").PutRow(ctx, tablekit.Key("id", tablekit.String("a")), []tablekit.Column{
		{Name: "x", Value: tablekit.Integer(1), Version: v}, {Name: "x", Value: tablekit.Integer(0), Version: v - 1000},
	}); err != nil {
		t.Fatal(err)
	}
	b := serve(c, get("/t/e/row?key=id%3Da")).Body.String()
	exp := time.UnixMilli(v).UTC().Truncate(time.Second).Add(24 * time.Hour).Format("2006-01-02 15:04:05Z")
	for _, want := range []string{"expires (UTC)", exp, time.UnixMilli(v).UTC().Format("2006-01-02 15:04:05.999Z"), fmt.Sprint(v - 1000), "table TTL 24h0m0s"} {
		if !strings.Contains(b, want) {
			t.Errorf("row page lacks %q", want)
		}
	}
}

// Dropping a table asks for its name typed again.
func TestUIDropAsksForTheName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, db := newTestConsole(t, consoleConfig{write: true}, "mem://")
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "keep", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}}); err != nil {
		t.Fatal(err)
	}
	w := serve(c, post("/tables/drop", url.Values{"csrf": {c.csrf}, "name": {"keep"}, "confirm": {"kee"}}))
	if w.Code != 400 || !strings.Contains(w.Body.String(), "nothing was dropped") {
		t.Fatalf("drop with a mistyped name: %d %s", w.Code, w.Body)
	}
	if _, err := db.DescribeTable(ctx, "keep"); err != nil {
		t.Fatalf("the table is gone: %v", err)
	}
	if w := serve(c, post("/tables/drop", url.Values{"csrf": {c.csrf}, "name": {"keep"}, "confirm": {"keep"}})); w.Code != http.StatusSeeOther {
		t.Fatalf("drop: %d %s", w.Code, w.Body)
	}
	if _, err := db.DescribeTable(ctx, "keep"); !errors.Is(err, tablekit.ErrTableNotFound) {
		t.Fatalf("after the drop: %v", err)
	}
}
