package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// ordersURL is a store with table o: rows with and without status,
// region and total, and a total of another type (an Integer).
func ordersURL(t *testing.T) string {
	url := fileURL(t)
	ok(t, url, "create", "o", "--key", "id:String", "--max-versions", "2")
	in := `{"id":"o1","status":"paid","total":10.5}
{"id":"o2","status":"pending","total":120.5}
{"id":"o3","total":5.5}
{"id":"o4","status":"pending","region":"eu"}
{"id":"o5","status":"pending","total":200}
{"key":{"id":{"s":"o6"}},"columns":{"total":[{"ts":1700000000001,"d":1.5},{"ts":1700000000000,"d":500.5}],"status":[{"ts":1700000000000,"s":"it's \"quoted\""}]}}
`
	if r := tk(t, url, in, "import", "o"); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	return url
}

// scanIDs are the row keys scan prints for args.
func scanIDs(t *testing.T, url string, args ...string) string {
	t.Helper()
	out := ok(t, url, append([]string{"scan", "o", "--format", "csv"}, args...)...)
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		id, _, _ := strings.Cut(l, ",")
		if len(ids) == 0 || ids[len(ids)-1] != id {
			ids = append(ids, id)
		}
	}
	return strings.Join(ids, " ")
}

func TestFilter(t *testing.T) {
	t.Parallel()
	url := ordersURL(t)
	cases := []struct{ expr, want string }{
		{`status == s:pending`, "o2 o4 o5"},
		{`status != s:paid`, "o2 o4 o5 o6"},        // a row without status fails, != too
		{`status? != s:paid`, "o2 o3 o4 o5 o6"},    // ? : it passes
		{`not status == s:paid`, "o2 o3 o4 o5 o6"}, // not of a failed comparison passes
		{`total >= d:100`, "o2"},                   // o5's total is an Integer: never matches a Double
		{`total >= i:100`, "o5"},                   //
		{`any(total) >= d:100`, "o2 o6"},           // any version: o6's older 500.5
		{`any(total?) >= d:100 and status == s:pending`, "o2 o4"},
		{`(status == s:pending or total < d:6) and not region == "eu"`, "o2 o3 o5 o6"},
		{`status == s:pending && !(region == s:eu) || total == d:10.5`, "o1 o2 o5"},
		{`status == "it's \"quoted\""`, "o6"},
		{`STATUS == s:x OR status == s:paid`, "o1"},
		{"`status` == s:paid", "o1"},
	}
	for _, c := range cases {
		if got := scanIDs(t, url, "--filter", c.expr, "--versions", "2"); got != c.want {
			t.Errorf("scan --filter %s: rows %q, want %q", c.expr, got, c.want)
		}
	}
	// count takes the same filter, with the range and the limit.
	if got := ok(t, url, "count", "o", "--filter", "status == s:pending"); got != "3\n" {
		t.Errorf("count --filter: %q, want 3", got)
	}
	if got := ok(t, url, "count", "o", "--filter", "status == s:pending", "--limit", "2"); got != "2\n" {
		t.Errorf("count --filter --limit 2: %q", got)
	}
	if got := ok(t, url, "count", "o", "--filter", "status == s:pending", "--start", "id=o3"); got != "2\n" {
		t.Errorf("count --filter --start id=o3: %q", got)
	}
	// Parse errors are usage errors naming the position, with a caret.
	for _, c := range []struct{ expr, want string }{
		{`status = s:x`, "at position 8: want an operator ==, !=, <, <=, > or >= after column \"status\", found \"=\" (equality is ==)\n    status = s:x\n           ^"},
		{`(status == s:x`, "at position 15: want ) to close the ( at position 1, found the end of the filter"},
		{`status == pending`, `at position 11: value "pending" needs a type`},
		{`status == s:x foo`, `at position 15: want "and", "or" or the end of the filter, found "foo"`},
		{`status ==`, "at position 10: want a value after the operator"},
		{`and status == s:x`, `at position 1: want a comparison COLUMN OP VALUE, "not" or "(" here, found "and"`},
		{`status == "open`, "at position 11: unterminated quoted string"},
		{`id == s:o1`, `at position 1: "id" is a key column of table "o"`},
		{`total > d:NaN`, "at position 9: a Double must be a finite number"},
	} {
		r := tk(t, url, "", "count", "o", "--filter", c.expr)
		if r.code != 2 || !strings.Contains(r.stderr, "--filter: "+c.want) || r.stdout != "" {
			t.Errorf("count --filter %s: exit %d, stdout %q\nstderr: %s\nwant: %s", c.expr, r.code, r.stdout, r.stderr, c.want)
		}
	}
	// --help explains it with examples.
	for _, cmd := range []string{"scan", "count"} {
		if out := ok(t, url, cmd, "--help"); !strings.Contains(out, "--filter 'status == s:pending'") || !strings.Contains(out, "COLUMN? to let such a row pass") {
			t.Errorf("%s --help lacks the filter examples:\n%s", cmd, out)
		}
	}
}

// TestFilterIndexTyped: in a filter, an untyped value of a column an index
// declares with a type takes that type, as put does, in table and index
// scans, count and the console's filter box; an explicit type still wins;
// a column no index types, or two type differently, needs a TYPE:.
func TestFilterIndexTyped(t *testing.T) {
	t.Parallel()
	u := fileURL(t)
	ok(t, u, "create", "o", "--key", "id:String", "--index", "by_status=status:String/total",
		"--index", "by_n=n:Integer", "--index", "by_b=blob:Binary", "--index", "by_x=x:Integer", "--index", "by_x2=x:String")
	ok(t, u, "put", "o", "id=o1", "--col", "status=pending", "--col", "n=42", "--col", "blob=0x00ff", "--col", "total=i:10")
	ok(t, u, "put", "o", "id=o2", "--col", "status=paid", "--col", "n=-1", "--col", `blob="\x01"`, "--col", "total=i:20")
	ok(t, u, "put", "o", "id=o3", "--col", "status=pending", "--col", "n=7")
	ok(t, u, "put", "o", "id=o4", "--col", "note=s:pending", "--col", "n=i:1000")
	for _, c := range []struct{ expr, want string }{
		{`status == pending`, "o1 o3"},
		{`status == s:pending`, "o1 o3"},
		{`status == "pending"`, "o1 o3"},
		{`status != pending`, "o2"},
		{`status? == pending`, "o1 o3 o4"},
		{`status == pend`, ""},
		{`n > 5`, "o1 o3 o4"},
		{`n >= -1 and n < 10`, "o2 o3"},
		{`n == s:42`, ""}, // an explicit type wins: a String never matches an Integer n
		{`n == i:42`, "o1"},
		{`blob == 0x00ff`, "o1"},
		{`blob == 00FF`, "o1"},
		{`blob == "\x01"`, "o2"}, // quoted: the Binary's bytes, as in put
		{`blob > 0x00ff`, "o2"},  // bytes: 01 > 00 ff
		{`status == paid and total >= i:15`, "o2"},
		{`(status == pending or n < 0) and not blob == 0x00ff`, "o2 o3"},
		{`note == s:pending`, "o4"},
	} {
		if got := scanIDs(t, u, "--filter", c.expr); got != c.want {
			t.Errorf("scan --filter %s: rows %q, want %q", c.expr, got, c.want)
		}
		if n := ok(t, u, "count", "o", "--filter", c.expr); n != fmt.Sprintf("%d\n", len(strings.Fields(c.want))) {
			t.Errorf("count --filter %s = %q, want %d", c.expr, n, len(strings.Fields(c.want)))
		}
	}
	// Index scans and counts: the filter is typed by the table's indexes,
	// the index's own column included.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--index", "by_status", "--filter", "status == pending"}, "status=pending,id=o1 status=pending,id=o3"},
		{[]string{"--index", "by_status", "--filter", "status != pending"}, "status=paid,id=o2"},
		{[]string{"--index", "by_n", "--filter", "n > 5"}, "n=7,id=o3 n=42,id=o1 n=1000,id=o4"},
		{[]string{"--index", "by_n", "--filter", "n < 100", "--backward"}, "n=42,id=o1 n=7,id=o3 n=-1,id=o2"},
		{[]string{"--index", "by_b", "--filter", "blob == 0x00ff"}, "blob=0x00ff,id=o1"},
		{[]string{"--index", "by_status", "--prefix", "status=pending", "--filter", "total >= i:5"}, "status=pending,id=o1"},
	} {
		got := strings.Join(keysIn(ok(t, u, append([]string{"scan", "o"}, c.args...)...)), " ")
		if got != c.want {
			t.Errorf("scan o %v:\n got %s\nwant %s", c.args, got, c.want)
		}
		if n := ok(t, u, append([]string{"count", "o"}, c.args...)...); n != fmt.Sprintf("%d\n", len(strings.Fields(c.want))) {
			t.Errorf("count o %v = %q, want %d", c.args, n, len(strings.Fields(c.want)))
		}
	}
	// Refusals: usage errors at the value's position, nothing on stdout.
	conflict := `indexes of table "o" declare column "x" with different types (by_x Integer, by_x2 String), so its value must name one`
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"scan", "o", "--filter", "note == pending"}, []string{`at position 9: value "pending" needs a type: s:TEXT`}},
		{[]string{"count", "o", "--filter", "total >= 5"}, []string{`at position 10: value "5" needs a type`}},
		{[]string{"scan", "o", "--index", "by_status", "--filter", "total >= 5"}, []string{`at position 10: value "5" needs a type`}},
		{[]string{"count", "o", "--filter", "x == 5"}, []string{`at position 6: value "5" needs a type`, conflict}},
		{[]string{"scan", "o", "--index", "by_x", "--filter", "x == 5"}, []string{conflict}},
		{[]string{"count", "o", "--filter", "n == abc"}, []string{`at position 6: an Integer must be a decimal int64, not "abc" (an index declares it Integer)`}},
		{[]string{"count", "o", "--filter", `n == "5"`}, []string{"an Integer cannot be quoted", "(an index declares it Integer)"}},
		{[]string{"count", "o", "--filter", "blob == zz"}, []string{"at position 9: a Binary must be hex", "(an index declares it Binary)"}},
		{[]string{"count", "o", "--filter", "status == pending and id == o1"}, []string{`at position 23: "id" is a key column of table "o"`}},
	} {
		r := tk(t, u, "", c.args...)
		if r.code != 2 || r.stdout != "" || !containsAll(r.stderr, c.want) {
			t.Errorf("tablekit %v: exit %d, stdout %q, want 2 and stderr with %q\nstderr: %s", c.args, r.code, r.stdout, c.want, r.stderr)
		}
		if strings.Contains(c.args[len(c.args)-1], "note") && strings.Contains(r.stderr, "indexes of table") {
			t.Errorf("tablekit %v: a column no index declares is said to conflict: %s", c.args, r.stderr)
		}
	}
	// put refuses an untyped x with the same words.
	if r := tk(t, u, "", "put", "o", "id=o5", "--col", "x=5"); r.code != 2 || !containsAll(r.stderr, []string{`column "x": value "5" needs a type`, conflict}) {
		t.Errorf("put --col x=5: %+v", r)
	}
	// The explicit type of a conflicting column is taken as written.
	if n := ok(t, u, "count", "o", "--filter", "x? == i:5"); n != "4\n" {
		t.Errorf("count --filter 'x? == i:5' = %q, want 4 (no row has x)", n)
	}
	for _, want := range []string{"--filter 'status == pending'", "blob == 0x00ff"} {
		if out := ok(t, u, "help", "keys"); !strings.Contains(out, want) {
			t.Errorf("help keys lacks %s:\n%s", want, out)
		}
		if out := ok(t, u, "scan", "--help"); !strings.Contains(out, want) {
			t.Errorf("scan --help lacks %s:\n%s", want, out)
		}
	}

	// The console's filter box parses the same expressions, typed the same
	// way, on the table's rows page and on an index's.
	ctx := context.Background()
	c, err := newConsole(openURL(t, u), &env{url: u}, consoleConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ index, filter, want string }{
		{"", "status == pending", "id=o1 id=o3"},
		{"", "n > 5 and blob? != 0x00ff", "id=o3 id=o4"},
		{"by_status", "status == pending", "id=o1 id=o3"}, // an index row's link: its table row
		{"by_n", "n <= 7", "id=o2 id=o3"},
		{"by_n", "n > -1 and n <= 100", "id=o3 id=o1"}, // index order
	} {
		src, err := c.source(ctx, "o", tc.index)
		if err != nil {
			t.Fatal(err)
		}
		d, err := c.readRows(ctx, src, url.Values{"filter": {tc.filter}})
		if err != nil {
			t.Errorf("console %q filter %s: %v", tc.index, tc.filter, err)
			continue
		}
		if got := strings.Join(keysOf(d), " "); got != tc.want {
			t.Errorf("console %q filter %s: rows %q, want %q", tc.index, tc.filter, got, tc.want)
		}
	}
	for filter, want := range map[string]string{"note == pending": `value "pending" needs a type`, "x == 5": conflict} {
		if _, err := c.rowsData(ctx, "o", url.Values{"filter": {filter}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("console filter %s: %v, want an error with %q", filter, err, want)
		}
		w := serve(c, get("/t/o/i/by_status?filter="+url.QueryEscape(filter)))
		if w.Code != 400 || !strings.Contains(w.Body.String(), "needs a type") {
			t.Errorf("console index page filter %s: %d\n%s", filter, w.Code, w.Body.String())
		}
	}
}
