package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/bigtable/bttest"
)

// options reads a table's options with describe --json.
func options(t *testing.T, env []string, url, table string) jsonOptions {
	t.Helper()
	r := tkEnv(t, env, url, "", "describe", table, "--json")
	if r.code != 0 {
		t.Fatalf("describe %s: exit %d: %s", table, r.code, r.stderr)
	}
	var h jsonHeader
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil {
		t.Fatal(err)
	}
	return h.Options
}

// tenDays are the options the import tests' table has: a 10-day TTL.
var tenDays = jsonOptions{TTL: 864000, MaxVersions: 2, MaxVersionOffset: 86400}

const ordersHeader = `{"table":"orders","key":[{"name":"id","type":"String"}],"options":{"ttl":864000,"max_versions":2,"max_version_offset":86400}}`

// orderLines are n plain row lines o00000… of table orders.
func orderLines(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, `{"id":"o%05d","status":"paid","total":%d.5}`+"\n", i, i)
	}
	return b.String()
}

// A refused line, from stdin or a file, or a header with invalid options,
// leaves the table's options as they were; the error names the line and
// the command that goes on, and that command finishes the import.
func TestImportRefusedLineKeepsOptions(t *testing.T) {
	t.Parallel()
	url := fileURL(t)
	ok(t, url, "create", "orders", "--key", "id:String", "--ttl", "864000", "--max-versions", "2")
	// 450 good rows (two batches of 200 are written), then a refused one.
	in := ordersHeader + "\n" + orderLines(0, 450) + `{"id":"bad","bad-name":1}` + "\n" + orderLines(450, 10)
	r := tk(t, url, in, "import")
	if r.code != 1 || !strings.Contains(r.stderr, "line 452: ") || !strings.Contains(r.stderr, `column name "bad-name"`) {
		t.Fatalf("import with a refused line 452: %+v", r)
	}
	if want := "400 rows written into \"orders\", up to line 401; its options are set back; fix line 452, then to go on, run: tablekit import --from-line 402 (with the same input on stdin)"; !strings.Contains(r.stderr, want) {
		t.Errorf("import's message lacks %q:\n%s", want, r.stderr)
	}
	if got := options(t, nil, url, "orders"); got != tenDays {
		t.Fatalf("after a refused line the options are %+v, want %+v", got, tenDays)
	}
	if got := ok(t, url, "count", "orders"); got != "400\n" {
		t.Fatalf("count after the refused line = %q, want the 400 rows written", got)
	}
	// The printed command, with line 452 fixed, ends the import.
	fixed := strings.Replace(in, `"bad-name":1`, `"note":"fixed"`, 1)
	if r := tk(t, url, fixed, "import", "--from-line", "402"); r.code != 0 || !strings.Contains(r.stderr, `imported 61 rows into "orders"`) {
		t.Fatalf("resumed import: %+v", r)
	}
	if got := ok(t, url, "count", "orders"); got != "461\n" {
		t.Fatalf("count after the resumed import = %q, want 461", got)
	}

	// From a file every line is checked first: nothing is written.
	path := filepath.Join(t.TempDir(), "in.jsonl")
	bad := ordersHeader + "\n" + orderLines(1000, 450) + `{"id":"bad","n":[]}` + "\n"
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	r = tk(t, url, "", "import", "-i", path)
	if r.code != 1 || !strings.Contains(r.stderr, "line 452: ") || !strings.Contains(r.stderr, "nothing written") {
		t.Fatalf("import -i with a refused line: %+v", r)
	}
	if got := ok(t, url, "count", "orders"); got != "461\n" {
		t.Fatalf("count after the refused file = %q, want 461 (nothing written)", got)
	}

	// A header with invalid options is refused before anything is written,
	// for an existing table and a new one.
	for _, name := range []string{"orders", "fresh"} {
		h := strings.Replace(strings.Replace(ordersHeader, `"ttl":864000`, `"ttl":5`, 1), `"orders"`, `"`+name+`"`, 1)
		r := tk(t, url, h+"\n"+orderLines(2000, 300), "import")
		if r.code != 1 || !strings.Contains(r.stderr, "line 1 (the header)") || !strings.Contains(r.stderr, "TTL 5s") {
			t.Fatalf("import into %s with ttl 5: %+v", name, r)
		}
	}
	if got := options(t, nil, url, "orders"); got != tenDays {
		t.Fatalf("after a refused header the options are %+v, want %+v", got, tenDays)
	}
	if got := ok(t, url, "count", "orders"); got != "461\n" {
		t.Fatalf("count after the refused header = %q, want 461", got)
	}
	if r := tk(t, url, "", "describe", "fresh"); r.code != 1 || !strings.Contains(r.stderr, "table not found") {
		t.Fatalf("a refused header created its table: %+v", r)
	}
	// A refused first row leaves no table behind either.
	if r := tk(t, url, strings.Replace(ordersHeader, `"orders"`, `"fresh"`, 1)+"\n"+`{"id":1}`+"\n", "import"); r.code != 1 || !strings.Contains(r.stderr, `line 2: key column "id": the key column is String, not Integer`) {
		t.Fatalf("import of a wrong-typed key: %+v", r)
	}
	if r := tk(t, url, "", "describe", "fresh"); r.code != 1 {
		t.Fatalf("a refused first row left its new table: %+v", r)
	}
	// A header sets the options it gives on an existing table.
	ok(t, url, "alter", "orders", "--ttl", "-1")
	if r := tk(t, url, ordersHeader+"\n", "import"); r.code != 0 || !strings.Contains(r.stderr, "imported 0 rows") {
		t.Fatalf("import of a header alone: %+v", r)
	}
	if got := options(t, nil, url, "orders"); got != tenDays {
		t.Fatalf("after importing the header alone the options are %+v, want the header's %+v", got, tenDays)
	}
}

// Plain JSON lines go into an existing table, its schema from the table;
// every error says its line and what to write instead.
func TestImportPlainLines(t *testing.T) {
	t.Parallel()
	url := fileURL(t)
	ok(t, url, "create", "o", "--key", "id:String,n:Integer")
	in := `{"id":"a","n":1,"status":"paid","total":9.5,"qty":3,"gift":false,"blob":{"b":"AAE="}}` + "\n\n" +
		`{"key":{"id":{"s":"b"},"n":{"i":2}},"columns":{"status":[{"ts":1700000000000,"s":"pending"}]}}` + "\n"
	r := tk(t, url, in, "import", "o")
	if r.code != 0 || r.stderr != "imported 2 rows into \"o\"\n" {
		t.Fatalf("import of plain lines: %+v", r)
	}
	out := ok(t, url, "scan", "o")
	for _, want := range []string{"s:paid", "d:9.5", "i:3", "bool:false", "b:0x0001", "1700000000000  s:pending"} {
		if !strings.Contains(out, want) {
			t.Errorf("scan lacks %q:\n%s", want, out)
		}
	}
	if r := tk(t, url, `{"id":"c","n":3}`+"\n", "import", "o"); r.stderr != "imported 1 row into \"o\"\n" {
		t.Errorf("import of one row printed %q", r.stderr)
	}
	cases := []struct{ in, args, want string }{
		{`{"id":"a","n":1}`, "", `line 1 is a row, not export's header line: name the table to import into (tablekit import TABLE`},
		{`{"id":"a","n":1}`, "nope", `table "nope" does not exist, and the input has no header line to create it from: create it first (tablekit create nope --key`},
		{`{"id":"a"}`, "o", `line 1: the line lacks key column "n" (table "o"'s key is id:String,n:Integer); a row line of table "o" is {"key":{"id":{"s":"a"},"n":{"i":1}},"columns":{"price":[{"ts":1700000000000,"d":9.5}]}} (export's form) or {"id":"a","n":1,"price":9.5} (a plain object)`},
		{`{"id":"a","n":"1"}`, "o", `line 1: key column "n": an Integer is a JSON number: write 1, not "1"`},
		{`{"id":"a","n":1}` + "\n" + `{"id":"a","n":1,"x":null}`, "o", `line 2: column "x": null is not a value: leave the column out of the line`},
		{`{"key":{"id":{"s":"a"},"n":{"i":1}},"columns":{"x":[]}}`, "o", `line 1: column "x" has no versions: give at least one, as in "x":[{"ts":1700000000000,"i":42}], or leave the column out`},
		{`{"key":{"id":{"s":"a"},"n":{"i":1}},"columns":{"x":{"i":1}}}`, "o", `line 1: column "x": its versions are a list, as in "x":[{"ts":1700000000000,"i":42}], not a JSON object`},
		{`{"table":"o","key":{"id":"String"}}`, "", `line 1 (the header): "key" is a JSON object where a list [...] is wanted; a header line is {"table":"NAME","key":[{"name":"id","type":"String"}]`},
		{`not json`, "o", `line 1: not a JSON object (invalid JSON at byte 2`},
		{`{"id":"a","n":1}` + "\n" + ordersHeader, "o", `line 2: a header line may only be line 1`},
	}
	for _, c := range cases {
		args := []string{"import"}
		if c.args != "" {
			args = append(args, c.args)
		}
		r := tk(t, url, c.in+"\n", args...)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "Go struct") || strings.Contains(r.stderr, "jsonHeader") {
			t.Errorf("import %s of %s: exit %d\nstderr: %s\nwant: %s", c.args, c.in, r.code, r.stderr, c.want)
		}
	}
	if got := ok(t, url, "count", "o"); got != "3\n" {
		t.Errorf("count after the refused imports = %q, want 3", got)
	}
}

// Ctrl-C during an import (reading a pipe that has gone quiet) sets the
// table's options back and prints the command that goes on; SIGKILL
// leaves them widened, which describe, import and copy then recognise,
// and running the import again to the end sets them. Bigtable's test
// server holds the table, so that describe can look while import runs.
func TestImportInterruptAndKill(t *testing.T) {
	t.Parallel()
	bt, err := bttest.NewServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	env := []string{"BIGTABLE_EMULATOR_HOST=" + bt.Addr}
	url := "bigtable://proj/inst"
	if r := tkEnv(t, env, url, "", "create", "orders", "--key", "id:String", "--ttl", "864000", "--max-versions", "2"); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		cmd := exec.Command(tkBinary, "import")
		cmd.Env = append(append(os.Environ(), "TABLEKIT_URL="+url), env...)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		io.WriteString(stdin, ordersHeader+"\n"+orderLines(0, 10))
		// The import widens the options before it reads the rows: wait for it.
		deadline := time.Now().Add(2 * time.Minute)
		for options(t, env, url, "orders").TTL != -1 {
			if time.Now().After(deadline) {
				t.Fatalf("the import never widened the table's options; stderr: %s", stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		stdin.Close()
		got := options(t, env, url, "orders")
		if sig == syscall.SIGINT {
			if got != tenDays {
				t.Fatalf("after Ctrl-C the options are %+v, want %+v", got, tenDays)
			}
			if want := `interrupted: no row written into "orders"; its options are set back; to go on, run: tablekit import (with the same input on stdin)`; !strings.Contains(stderr.String(), want) {
				t.Errorf("after Ctrl-C import printed %q, want %q", stderr.String(), want)
			}
			continue
		}
		if got.TTL != -1 || got.MaxVersionOffset != 2147483646 {
			t.Fatalf("after SIGKILL the options are %+v, want the widened ones", got)
		}
		if r := tkEnv(t, env, url, "", "describe", "orders"); !strings.Contains(r.stderr, "warning: table \"orders\" has the temporary options") {
			t.Errorf("describe of a widened table: %+v", r)
		}
		// Without a header its own options are unknown: refused.
		if r := tkEnv(t, env, url, orderLines(0, 3), "import", "orders"); r.code != 1 || !strings.Contains(r.stderr, "tablekit alter orders --ttl SECONDS --max-version-offset SECONDS") {
			t.Errorf("headerless import into a widened table: %+v", r)
		}
		// copy would carry them on: refused.
		if r := tkEnv(t, env, "", "", "copy", url, fileURL(t)); r.code != 1 || !strings.Contains(r.stderr, "source: table \"orders\" has the temporary options") {
			t.Errorf("copy of a widened table: %+v", r)
		}
		// The same import run to the end sets the header's options.
		if r := tkEnv(t, env, url, ordersHeader+"\n"+orderLines(0, 10), "import"); r.code != 0 {
			t.Fatalf("import again: %+v", r)
		}
		if got := options(t, env, url, "orders"); got != tenDays {
			t.Fatalf("after the import ran again the options are %+v, want %+v", got, tenDays)
		}
	}
}
