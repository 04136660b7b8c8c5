package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
)

// TestIndexCommands: create --index, describe, scan --index (order,
// backward, limit, filter), reindex --verify, and a bad --index.
func TestIndexCommands(t *testing.T) {
	url := fileURL(t)
	ok(t, url, "create", "orders", "--key", "id:String", "--index", "by_status=status:String/total", "--index", "by_id=id")
	ok(t, url, "put", "orders", "id=a", "--col", "status=s:open", "--col", "total=i:10")
	ok(t, url, "put", "orders", "id=b", "--col", "status=s:closed", "--col", "total=i:20")
	ok(t, url, "put", "orders", "id=c", "--col", "total=i:30")
	if out := ok(t, url, "describe", "orders"); !strings.Contains(out, "index:              by_status=status:String/total (ready)") || !strings.Contains(out, "by_id=id:String (ready)") {
		t.Errorf("describe does not show the indexes:\n%s", out)
	}
	out := ok(t, url, "scan", "orders", "--index", "by_status", "--format", "csv")
	if !strings.HasPrefix(out, "status,id,") || !strings.Contains(out, "closed,b,total") {
		t.Errorf("scan --index --format csv: the key columns are the index's:\n%s", out)
	}
	out = ok(t, url, "scan", "orders", "--index", "by_status")
	if i, j := strings.Index(out, "status=closed,id=b"), strings.Index(out, "status=open,id=a"); i < 0 || j < i || strings.Contains(out, "id=c") {
		t.Errorf("scan --index: want closed/b then open/a, not c:\n%s", out)
	}
	out = ok(t, url, "scan", "orders", "--index", "by_status", "--backward", "--limit", "1")
	if !strings.Contains(out, "status=open,id=a") || strings.Contains(out, "id=b") {
		t.Errorf("scan --index --backward --limit 1:\n%s", out)
	}
	out = ok(t, url, "scan", "orders", "--index", "by_status", "--filter", "total >= i:15")
	if !strings.Contains(out, "id=b") || strings.Contains(out, "id=a") {
		t.Errorf("scan --index --filter:\n%s", out)
	}
	if out := ok(t, url, "reindex", "orders", "by_status", "--verify"); !strings.Contains(out, "rows 3, entries 2, missing 0, extra 0") {
		t.Errorf("reindex --verify: %s", out)
	}
	if r := tk(t, url, "", "create", "bad", "--key", "id:String", "--index", "nope"); r.code == 0 || !strings.Contains(r.stderr, "NAME=COL") {
		t.Errorf("create with a bad --index: code %d, stderr %s", r.code, r.stderr)
	}
	if r := tk(t, url, "", "create", "bad", "--key", "id:String", "--index", "x=v:Double"); r.code == 0 || !strings.Contains(r.stderr, "Double") {
		t.Errorf("create with a Double index column: code %d, stderr %s", r.code, r.stderr)
	}
}

// keysIn returns the index keys of a table-format output in order, one
// per row (the KEY column of the first line of each row).
func keysIn(out string) []string {
	var keys []string
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines[1:] {
		k := strings.Fields(l)[0]
		if len(keys) == 0 || keys[len(keys)-1] != k {
			keys = append(keys, k)
		}
	}
	return keys
}

// indexedOrders is a store with table orders indexed by_status (status, then
// id) and by_status_total (status, total, then id), its rows put with
// untyped index column values (the indexes type them).
func indexedOrders(t *testing.T) string {
	t.Helper()
	url := fileURL(t)
	ok(t, url, "create", "orders", "--key", "id:String", "--index", "by_status=status:String/total", "--index", "by_status_total=status:String,total:Integer")
	for _, p := range [][2]string{{"o1", "pending"}, {"o2", "pending"}, {"o3", "paid"}, {"o4", "shipped"}, {"o5", "pending"}} {
		total := map[string]string{"o1": "10", "o2": "30", "o3": "20", "o4": "5", "o5": "20"}[p[0]]
		ok(t, url, "put", "orders", "id="+p[0], "--col", "status="+p[1], "--col", "total="+total)
	}
	ok(t, url, "put", "orders", "id=o6", "--col", "total=1") // no status: in no index
	return url
}

// TestIndexBounds: scan and count --index with --prefix, --start, --end,
// both ways, on one- and two-column indexes; a bound naming a column not
// in the index key is a usage error naming the index.
func TestIndexBounds(t *testing.T) {
	t.Parallel()
	url := indexedOrders(t)
	for _, c := range []struct {
		args []string
		want string // the keys in order, space-separated
	}{
		{[]string{"--index", "by_status", "--prefix", "status=s:pending"}, "status=pending,id=o1 status=pending,id=o2 status=pending,id=o5"},
		{[]string{"--index", "by_status", "--prefix", "status=pending"}, "status=pending,id=o1 status=pending,id=o2 status=pending,id=o5"},
		{[]string{"--index", "by_status", "--prefix", "status=pending", "--backward"}, "status=pending,id=o5 status=pending,id=o2 status=pending,id=o1"},
		{[]string{"--index", "by_status", "--prefix", "status=pe", "--limit", "2"}, "status=pending,id=o1 status=pending,id=o2"},
		{[]string{"--index", "by_status", "--prefix", "status=pending,id=o2"}, "status=pending,id=o2"},
		{[]string{"--index", "by_status", "--start", "status=paid", "--end", "status=shipped"}, "status=paid,id=o3 status=pending,id=o1 status=pending,id=o2 status=pending,id=o5"},
		{[]string{"--index", "by_status", "--start", "status=pending,id=o2"}, "status=pending,id=o2 status=pending,id=o5 status=shipped,id=o4"},
		{[]string{"--index", "by_status", "--start", "status=shipped", "--end", "status=paid", "--backward"}, "status=shipped,id=o4 status=pending,id=o5 status=pending,id=o2 status=pending,id=o1"},
		{[]string{"--index", "by_status", "--start", "status=pending,id=o2", "--end", "status=MIN", "--backward"}, "status=pending,id=o2 status=pending,id=o1 status=paid,id=o3"},
		{[]string{"--index", "by_status_total", "--prefix", "status=pending,total=20"}, "status=pending,total=20,id=o5"},
		{[]string{"--index", "by_status_total", "--prefix", "status=pending,total=i:30"}, "status=pending,total=30,id=o2"},
		{[]string{"--index", "by_status_total", "--prefix", "status=pending", "--backward"}, "status=pending,total=30,id=o2 status=pending,total=20,id=o5 status=pending,total=10,id=o1"},
		{[]string{"--index", "by_status_total", "--start", "status=pending,total=15", "--end", "status=pending,total=MAX"}, "status=pending,total=20,id=o5 status=pending,total=30,id=o2"},
		{[]string{"--index", "by_status_total", "--start", "status=pending,total=25", "--end", "status=pending,total=MIN", "--backward"}, "status=pending,total=20,id=o5 status=pending,total=10,id=o1"},
	} {
		got := strings.Join(keysIn(ok(t, url, append([]string{"scan", "orders"}, c.args...)...)), " ")
		if got != c.want {
			t.Errorf("scan orders %v:\n got %s\nwant %s", c.args, got, c.want)
		}
		if slices.Contains(c.args, "--limit") {
			continue // count takes --limit as scan does; its answer is not the keys'
		}
		if n := ok(t, url, append([]string{"count", "orders"}, c.args...)...); n != fmt.Sprintf("%d\n", len(strings.Fields(c.want))) {
			t.Errorf("count orders %v = %q, want %d", c.args, n, len(strings.Fields(c.want)))
		}
	}
	if n := ok(t, url, "count", "orders", "--index", "by_status"); n != "5\n" {
		t.Errorf("count --index by_status = %q, want 5 (o6 has no status)", n)
	}
	if n := ok(t, url, "count", "orders", "--index", "by_status", "--prefix", "status=pending", "--filter", "total >= i:20"); n != "2\n" {
		t.Errorf("count --index --prefix --filter = %q, want 2", n)
	}
	for _, c := range []struct {
		args []string
		want []string // on stderr
	}{
		{[]string{"scan", "orders", "--index", "by_status", "--prefix", "total=i:5"}, []string{"--prefix", `not "total"`, `index "by_status" of table "orders" has the key status:String,id:String`}},
		{[]string{"scan", "orders", "--index", "by_status", "--start", "id=o1"}, []string{"--start", `not "id"`, `index "by_status"`}},
		{[]string{"count", "orders", "--index", "by_status_total", "--end", "status=a,total=x"}, []string{"--end", `key column "total"`, "Integer"}},
		{[]string{"scan", "orders", "--index", "by_status", "--prefix", "status=a,id=b,x=c"}, []string{"has 3 columns", `index "by_status"`}},
	} {
		if r := tk(t, url, "", c.args...); r.code != 2 || r.stdout != "" || !containsAll(r.stderr, c.want) {
			t.Errorf("tablekit %v: exit %d, want 2 and stderr with %q\nstdout: %s\nstderr: %s", c.args, r.code, c.want, r.stdout, r.stderr)
		}
	}
	if r := tk(t, url, "", "scan", "orders", "--index", "nope", "--prefix", "status=a"); r.code != 1 || !strings.Contains(r.stderr, `no index "nope"`) {
		t.Errorf("scan of a missing index: %+v", r)
	}
	// A read the index refuses prints nothing on stdout, not a header.
	if r := tk(t, url, "", "scan", "orders", "--index", "by_status", "--prefix", "status=pending", "--versions", "2"); r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "MaxVersions") {
		t.Errorf("scan --index --versions 2: %+v", r)
	}
	if out := ok(t, url, "scan", "orders", "--index", "by_status", "--prefix", "status=none"); out != "KEY  COLUMN  VERSION  VALUE\n" {
		t.Errorf("an empty index range prints the header alone: %q", out)
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestIndexGet: get --index reads the index row of an index key; a key no
// row has now is exit 1, a key of the wrong shape exit 2 naming the index.
func TestIndexGet(t *testing.T) {
	t.Parallel()
	url := indexedOrders(t)
	out := ok(t, url, "get", "orders", "--index", "by_status", "status=pending,id=o2")
	if keysIn(out)[0] != "status=pending,id=o2" || !strings.Contains(out, "total") || !strings.Contains(out, "i:30") {
		t.Errorf("get --index by_status:\n%s", out)
	}
	out = ok(t, url, "get", "orders", "--index", "by_status_total", "status=pending,total=30,id=o2", "--format", "csv")
	if !strings.HasPrefix(out, "status,total,id,") || strings.Count(out, "\n") != 2 { // by_status_total includes nothing: a key-only row
		t.Errorf("get --index by_status_total --format csv:\n%s", out)
	}
	ok(t, url, "put", "orders", "id=o2", "--col", "status=paid", "--col", "total=30") // o2 moves: its old entry stays, never read
	for _, c := range []struct {
		args   []string
		code   int
		stderr []string
	}{
		{[]string{"status=pending,id=o2"}, 1, []string{`no row of table "orders" has index "by_status" key status=pending,id=o2`}},
		{[]string{"status=pending"}, 2, []string{"has 1 column", `index "by_status" of table "orders" has the key status:String,id:String`}},
		{[]string{"id=o2,status=pending"}, 2, []string{`key column 1 is "status", not "id"`, `index "by_status"`}},
	} {
		r := tk(t, url, "", append([]string{"get", "orders", "--index", "by_status"}, c.args...)...)
		if r.code != c.code || r.stdout != "" || !containsAll(r.stderr, c.stderr) {
			t.Errorf("get --index by_status %v: exit %d, want %d and stderr with %q\nstdout: %s\nstderr: %s", c.args, r.code, c.code, c.stderr, r.stdout, r.stderr)
		}
	}
	if out := ok(t, url, "get", "orders", "--index", "by_status", "status=paid,id=o2"); keysIn(out)[0] != "status=paid,id=o2" {
		t.Errorf("get --index after the move:\n%s", out)
	}
}

// TestIndexTypedPut: an untyped value of a column an index declares takes
// the index's type; a typed one keeps its own (the store refuses a
// conflicting one); other columns still need a type.
func TestIndexTypedPut(t *testing.T) {
	t.Parallel()
	url := fileURL(t)
	ok(t, url, "create", "orders", "--key", "id:String", "--index", "by_status=status:String/total", "--index", "by_n=n:Integer", "--index", "by_b=blob:Binary")
	ok(t, url, "put", "orders", "id=o1", "--col", "status=pending", "--col", "n=42", "--col", "blob=0x00ff", "--col", "total=i:7")
	version := time.Now().UnixMilli() - 1000
	ok(t, url, "put", "orders", "id=o2", "--col", `status="a, b"`, "--col", fmt.Sprintf("n=-1@%d", version), "--col", `blob="\x01"`)
	out := ok(t, url, "scan", "orders", "--format", "json")
	for _, want := range []string{`"status":[{"ts":`, `"s":"pending"`, `"i":42`, `"b":"AP8="`, `"s":"a, b"`, `"i":-1`, `"b":"AQ=="`, fmt.Sprintf(`"ts":%d`, version)} {
		if !strings.Contains(out, want) {
			t.Errorf("scan after the untyped puts lacks %s:\n%s", want, out)
		}
	}
	if got := keysIn(ok(t, url, "scan", "orders", "--index", "by_n")); strings.Join(got, " ") != "n=-1,id=o2 n=42,id=o1" {
		t.Errorf("scan --index by_n: %v", got)
	}
	for _, c := range []struct {
		col    string
		code   int
		stderr []string
	}{
		{"status=i:5", 1, []string{`"status"`, "Integer", "String"}}, // the store's refusal
		{"n=abc", 2, []string{`column "n"`, "an Integer must be a decimal int64", "an index declares it Integer"}},
		{"blob=zz", 2, []string{`column "blob"`, "hex", "an index declares it Binary"}},
		{"total=7", 2, []string{`column "total"`, "needs a type"}}, // included, not an index column
	} {
		r := tk(t, url, "", "put", "orders", "id=o3", "--col", c.col)
		if r.code != c.code || !containsAll(r.stderr, c.stderr) {
			t.Errorf("put --col %s: exit %d, want %d and stderr with %q\nstderr: %s", c.col, r.code, c.code, c.stderr, r.stderr)
		}
	}
	if r := tk(t, url, "", "get", "orders", "id=o3"); r.code != 1 {
		t.Errorf("a refused put wrote o3: %+v", r)
	}
	if out := ok(t, url, "help", "keys"); !strings.Contains(out, "--col status=pending") || !strings.Contains(out, "get --index") {
		t.Errorf("help keys does not say how index columns are typed:\n%s", out)
	}
}

// TestReindexVerifyStale: after an update of an index column, --verify
// reports the stale entry and exits 0; a missing entry (removed here from
// the file engine's entry table) makes it exit 1, and reindex puts it.
func TestReindexVerifyStale(t *testing.T) {
	t.Parallel()
	url := fileURL(t)
	ok(t, url, "create", "orders", "--key", "id:String", "--index", "by_status=status:String/total")
	ok(t, url, "put", "orders", "id=o1", "--col", "status=pending", "--col", "total=i:10")
	ok(t, url, "put", "orders", "id=o2", "--col", "status=pending", "--col", "total=i:20")
	ok(t, url, "put", "orders", "id=o1", "--col", "status=shipped", "--col", "total=i:10") // leaves (pending, o1)
	r := tk(t, url, "", "reindex", "orders", "by_status", "--verify")
	if r.code != 0 || !strings.Contains(r.stdout, "rows 2, entries 3, missing 0, extra 1") || !strings.Contains(r.stdout, "1 stale entry left by updates") || r.stderr != "" {
		t.Fatalf("reindex --verify after an update: %+v", r)
	}
	if got := keysIn(ok(t, url, "scan", "orders", "--index", "by_status")); strings.Join(got, " ") != "status=pending,id=o2 status=shipped,id=o1" {
		t.Errorf("the stale entry was read: %v", got)
	}
	// Without --verify, the entry is kept while under the grace period.
	if out := ok(t, url, "reindex", "orders", "by_status"); !strings.Contains(out, "extra 1, added 0, removed 0") || !strings.Contains(out, "1 stale entry kept") {
		t.Errorf("reindex of a young stale entry: %s", out)
	}

	removeEntry(t, url, "orders", "status=shipped") // the entry of o1's current row
	r = tk(t, url, "", "reindex", "orders", "by_status", "--verify")
	if r.code != 1 || !strings.Contains(r.stdout, "missing 1, extra 1") || !strings.Contains(r.stderr, `index "by_status" of table "orders" lacks 1 entry`) {
		t.Fatalf("reindex --verify with a missing entry: %+v", r)
	}
	if got := keysIn(ok(t, url, "scan", "orders", "--index", "by_status")); strings.Join(got, " ") != "status=pending,id=o2" {
		t.Errorf("scan with the entry missing: %v", got)
	}
	if out := ok(t, url, "reindex", "orders", "by_status"); !strings.Contains(out, "missing 1, extra 1, added 1") {
		t.Errorf("reindex: %s", out)
	}
	if r := tk(t, url, "", "reindex", "orders", "by_status", "--verify"); r.code != 0 || !strings.Contains(r.stdout, "missing 0, extra 1") {
		t.Errorf("reindex --verify after the repair: %+v", r)
	}
	if out := ok(t, url, "reindex", "--help"); !strings.Contains(out, "Exit status: 0") || !strings.Contains(out, "1 with --verify an entry is missing") {
		t.Errorf("reindex --help does not give the exit statuses:\n%s", out)
	}
}

// removeEntry deletes, through the file engine itself, the entries of
// table's only index whose bytes contain the value of part (NAME=VALUE):
// a missing entry, which no Client write leaves.
func removeEntry(t *testing.T, url, table, part string) {
	t.Helper()
	ctx := context.Background()
	dir := strings.TrimSuffix(strings.TrimPrefix(url, "file://"), "?nosync=true")
	eng, err := fileengine.Open(dir, &fileengine.Options{NoSync: true, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	m, err := tablekit.NewClient(eng).DescribeTable(ctx, table)
	if err != nil || len(m.Indexes) != 1 {
		t.Fatalf("describe %s: %+v, %v", table, m.Indexes, err)
	}
	sm, err := eng.DescribeTable(ctx, m.Indexes[0].Storage)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := fullBound(sm, tablekit.InfMin), fullBound(sm, tablekit.InfMax)
	resp, err := eng.GetRange(ctx, &tablekit.GetRangeRequest{Meta: sm, Start: lo, End: hi, Limit: 100, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: time.Now().UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	_, val, _ := strings.Cut(part, "=")
	n := 0
	for _, e := range resp.Rows {
		var b []byte
		for _, p := range e.Key {
			s, _ := p.Value.BytesString()
			b = append(b, s...)
		}
		if !strings.Contains(string(b), val) {
			continue
		}
		if _, err := eng.Write(ctx, &tablekit.WriteRequest{Meta: sm, Kind: tablekit.WriteDelete, Key: e.Key, Now: time.Now().UnixMilli()}); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("removed %d entries holding %q, want 1", n, val)
	}
}
