package main

import (
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
