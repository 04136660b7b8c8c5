package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit"
)

// seed creates table t in url with a 3-column key (String, Integer,
// Binary) and rows that exercise the syntax: a NUL byte, quotes, Unicode,
// an empty String, binary key bytes, every value type, several versions
// and a key-only row. Versions are fixed (the table's version window is
// the widest), so outputs are stable.
func seed(t *testing.T, url string) {
	t.Helper()
	ok(t, url, "create", "t", "--key", "id:String,n:Integer,bin:Binary", "--max-versions", "3", "--max-version-offset", "2147483647")
	for _, p := range seedPuts {
		ok(t, url, append([]string{"put", "t"}, p...)...)
	}
}

// seedPuts are seed's rows.
var seedPuts = [][]string{
	{`id="a\x00b",n=1,bin=0x00ff`, "--col", "int=i:9007199254740993@1000000002000", "--col", "int=d:1.5@1000000001000",
		"--col", "int=i:-7@1000000000000", "--col", `text="tab\there, \"quoted\""@1000000000000`},
	{`id="",n=-9223372036854775808,bin=0x`, "--col", "flag=bool:true@1000000000000", "--col", "zero=d:-0@1000000000000"},
	{`id=abc,n=2,bin=0x`},
	{`id=abd,n=3,bin=0x01`, "--col", "raw=b:0x00ff10@1000000000000", "--col", "raw2=b64:AAEC@1000000000000", "--col", "empty=b:@1000000000000"},
	{`id="日本",n=4,bin=0xffff`, "--col", `s="ünï\x00cödé"@1000000000000`, "--col", "big=d:1e300@1000000000000"},
	{`id=MIN-ish,n=5,bin=0x`, "--col", `s="MIN"@1000000000000`},
}

var seeded struct {
	once sync.Once
	dir  string
}

// seededURL is a file:// URL of a new copy of a store seed filled once.
func seededURL(t *testing.T) string {
	t.Helper()
	seeded.once.Do(func() {
		dir := filepath.Join(tmpRoot, "seeded")
		seed(t, "file://"+dir+"?nosync=true")
		seeded.dir = dir
	})
	if seeded.dir == "" {
		t.Fatal("seeding failed")
	}
	dir := filepath.Join(t.TempDir(), "db")
	if err := os.CopyFS(dir, os.DirFS(seeded.dir)); err != nil {
		t.Fatal(err)
	}
	return "file://" + dir + "?nosync=true"
}

func TestGoldenOutputs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
	}{
		{"scan.txt", []string{"scan", "t"}},
		{"scan.jsonl", []string{"scan", "t", "--format", "json", "--versions", "3"}},
		{"scan.csv", []string{"scan", "t", "--format", "csv", "--versions", "3"}},
		{"scan_prefix.txt", []string{"scan", "t", "--prefix", "id=ab"}},
		{"scan_prefix_backward.txt", []string{"scan", "t", "--prefix", "id=ab", "--backward"}},
		{"scan_bounds.txt", []string{"scan", "t", "--start", `id="a\x00b"`, "--end", "id=abd", "--limit", "5"}},
		{"scan_backward_limit.txt", []string{"scan", "t", "--backward", "--limit", "2"}},
		{"scan_timerange.txt", []string{"scan", "t", "--time-range", "1000000000000,1000000001500", "--columns", "int"}},
		{"get.txt", []string{"get", "t", `id="a\x00b",n=1,bin=0x00ff`, "--versions", "2"}},
		{"describe.txt", []string{"describe", "t"}},
		{"describe.json", []string{"describe", "t", "--json"}},
		{"ls.txt", []string{"ls", "-l"}},
		{"count.txt", []string{"count", "t"}},
		{"export.jsonl", []string{"export", "t"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			golden(t, c.name, ok(t, seededURL(t), c.args...))
		})
	}
}

// Every key scan prints can be given back to get, and addresses its row.
func TestPrintedKeysParseBack(t *testing.T) {
	t.Parallel()
	url := seededURL(t)
	out := ok(t, url, "scan", "t", "--format", "csv")
	lines := strings.Split(strings.TrimSpace(out), "\n")[1:]
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(ok(t, url, "scan", "t")), "\n")[1:] {
		key := strings.Fields(l)[0]
		if strings.Contains(l, `"`) { // a quoted key may hold spaces: cut at the two-space column gap
			key = l[:strings.Index(l, "  ")]
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		got := ok(t, url, "get", "t", key)
		if !strings.Contains(got, key) {
			t.Errorf("get %s printed another row:\n%s", key, got)
		}
	}
	if len(seen) != 6 || len(lines) < 6 {
		t.Fatalf("scan printed %d distinct keys, want 6:\n%s", len(seen), out)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	url := seededURL(t)
	cases := []struct {
		name   string
		url    string
		args   []string
		code   int
		stderr string // substring expected on stderr
		stdout string // substring expected on stdout
	}{
		{"no command", url, nil, 2, "Commands:", ""},
		{"unknown command", url, []string{"frobnicate"}, 2, `unknown command "frobnicate"`, ""},
		{"help", url, []string{"--help"}, 0, "", "Commands:"},
		{"help keys", url, []string{"help", "keys"}, 0, "", "Go-quoted"},
		{"command help", url, []string{"scan", "--help"}, 0, "", "-prefix"},
		{"help command", url, []string{"help", "copy"}, 0, "", "-checkpoint"},
		{"unknown flag", url, []string{"scan", "t", "--nope"}, 2, "flag provided but not defined", ""},
		{"missing argument", url, []string{"get", "t"}, 2, "want TABLE KEY", ""},
		{"no url", "", []string{"ls"}, 2, "TABLEKIT_URL", ""},
		{"unknown scheme", "nope://x", []string{"ls"}, 1, "registered:", ""},
		{"bad parameter", url + "&color=blue", []string{"ls"}, 1, "color", ""},
		{"missing table", url, []string{"scan", "nope"}, 1, "table not found", ""},
		{"missing row", url, []string{"get", "t", "id=zzz,n=1,bin=0x"}, 1, "not found", ""},
		{"key of wrong shape", url, []string{"get", "t", "id=zzz"}, 2, "has 1 column;", ""},
		{"key of wrong type", url, []string{"get", "t", "id=zzz,n=x,bin=0x"}, 2, `key column "n": an Integer must be a decimal int64, not "x"`, ""},
		{"untyped value", url, []string{"put", "t", "id=a,n=1,bin=0x", "--col", "x=42"}, 2, "needs a type", ""},
		{"refused write", url, []string{"put", "t", "id=a,n=1,bin=0x", "--col", "bad-name=d:1"}, 1, "invalid argument", ""},
		{"condition failed", url, []string{"put", "t", "id=abc,n=2,bin=0x", "--if", "not-exists"}, 1, "condition failed", ""},
		{"bad option", url, []string{"alter", "t", "--ttl", "5"}, 1, "TTL 5", ""},
		{"create exists", url, []string{"create", "t", "--key", "id:String"}, 1, "already exists", ""},
		{"drop without terminal", url, []string{"drop", "t"}, 1, "--yes", ""},
	}
	t.Run("cases", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				u := c.url
				if u == url {
					u = seededURL(t)
				}
				r := tk(t, u, "", c.args...)
				if r.code != c.code || !strings.Contains(r.stderr, c.stderr) || !strings.Contains(r.stdout, c.stdout) {
					t.Errorf("tablekit %v: exit %d, want %d; want %q on stderr, %q on stdout\nstdout: %s\nstderr: %s",
						c.args, r.code, c.code, c.stderr, c.stdout, r.stdout, r.stderr)
				}
				if r.code != 0 && r.stdout != "" && !strings.Contains(r.stdout, c.stdout) {
					t.Errorf("a failing command printed on stdout: %s", r.stdout)
				}
			})
		}
	})
	// A refused drop leaves the table; --yes drops it.
	if r := tk(t, url, "", "drop", "t"); r.code != 1 {
		t.Fatalf("drop without --yes: exit %d", r.code)
	}
	if got := ok(t, url, "count", "t"); got != "6\n" {
		t.Fatalf("after the refused drop, count = %q", got)
	}
	ok(t, url, "drop", "t", "--yes")
	if r := tk(t, url, "", "describe", "t"); r.code != 1 || !strings.Contains(r.stderr, "table not found") {
		t.Fatalf("describe after drop: %+v", r)
	}
}

func TestAlterAndDelete(t *testing.T) {
	t.Parallel()
	url := seededURL(t)
	ok(t, url, "alter", "t", "--ttl", "86400", "--max-versions", "5")
	var h jsonHeader
	if err := json.Unmarshal([]byte(ok(t, url, "describe", "t", "--json")), &h); err != nil {
		t.Fatal(err)
	}
	if h.Options.TTL != 86400 || h.Options.MaxVersions != 5 || h.Options.MaxVersionOffset != 2147483647 {
		t.Fatalf("options after alter: %+v", h.Options)
	}
	ok(t, url, "delete", "t", `id="a\x00b",n=1,bin=0x00ff`)
	if r := tk(t, url, "", "get", "t", `id="a\x00b",n=1,bin=0x00ff`); r.code != 1 {
		t.Fatalf("get after delete: exit %d, want 1", r.code)
	}
	if r := tk(t, url, "", "delete", "t", `id="a\x00b",n=1,bin=0x00ff`, "--if", "exists"); r.code != 1 || !strings.Contains(r.stderr, "condition failed") {
		t.Fatalf("conditional delete of a missing row: %+v", r)
	}
	// create --json from describe --json makes the same table elsewhere.
	other := fileURL(t)
	js := ok(t, url, "describe", "t", "--json")
	ok(t, other, "create", "--json", js)
	if got := ok(t, other, "describe", "t", "--json"); got != js {
		t.Fatalf("create --json: describe gives %s, want %s", got, js)
	}
}

// export, then import elsewhere, then export again: the same bytes
// (every version and type, Integer vs Double, Binary, -0, key-only rows).
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	a, b := seededURL(t), fileURL(t)
	exp := ok(t, a, "export", "t")
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	r := tk(t, b, exp, "import")
	if r.code != 0 || !strings.Contains(r.stderr, "imported 6 rows") {
		t.Fatalf("import: %+v", r)
	}
	if got := ok(t, b, "export", "t"); got != exp {
		t.Fatalf("export after import differs:\n%s\nwant\n%s", got, exp)
	}
	// Under another name, from a file.
	ok(t, b, "import", "t2", "-i", path)
	got := ok(t, b, "export", "t2")
	if strings.Replace(got, `"table":"t2"`, `"table":"t"`, 1) != exp {
		t.Fatalf("export of t2 differs:\n%s", got)
	}
	// A malformed line is refused with its line number.
	bad := strings.Replace(exp, `"i":-7}`, `"i":-7,"d":1}`, 1)
	if r := tk(t, b, bad, "import", "t3"); r.code != 1 || !strings.Contains(r.stderr, "line 4") {
		t.Fatalf("import of a two-typed value: %+v", r)
	}
	if r := tk(t, b, `{"key":{}}`+"\n", "import", "t3"); r.code != 1 || !strings.Contains(r.stderr, "header") {
		t.Fatalf("import without header: %+v", r)
	}
}

func TestKeySyntaxRoundTrip(t *testing.T) {
	meta := tableMeta("t", "s:String,i:Integer,b:Binary")
	for _, s := range []string{"", "a", "a b", "a,b", `a"b`, "MIN", "MAX", "s:x", "0x12", "\x00", "é\x00\n", "a=b", "x@1"} {
		for _, bin := range []string{"", "\x00", "\xff\x00abc"} {
			k := mustKey(meta, s, -42, bin)
			text := formatKey(k)
			back, err := parseKey(meta, text, false, tablekit.Value{})
			if err != nil || !back.Equal(k) {
				t.Errorf("formatKey(%v) = %s, parsed back as %v, %v", k, text, back, err)
			}
		}
	}
}

func TestValueSyntax(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"i:42", "i:42"}, {"d:1.5", "d:1.5"}, {"d:-0", "d:-0"}, {"bool:true", "bool:true"},
		{"b:00ff", "b:0x00ff"}, {"b:0x00ff", "b:0x00ff"}, {"b64:AP8=", "b:0x00ff"}, {`b:"\x00\xff"`, "b:0x00ff"},
		{"s:abc", "s:abc"}, {`"a b"`, `"a b"`}, {"s:a b", `"a b"`}, {`"\x00"`, `"\x00"`},
	} {
		v, err := parseValue(c.in)
		if err != nil || formatValue(v) != c.out {
			t.Errorf("parseValue(%q) = %v, %v; formats as %q, want %q", c.in, v, err, formatValue(v), c.out)
		}
	}
	for _, bad := range []string{"42", "i:4.2", "d:NaN", "d:inf", "bool:maybe", "b:0xz", "b64:!!", `"unterminated`, `s:"\xff"`, "x:1"} {
		if v, err := parseValue(bad); err == nil {
			t.Errorf("parseValue(%q) = %v, want an error", bad, v)
		}
	}
	c, err := parseColumn(`note="a@1"@1700000000000`)
	if err != nil || c.Name != "note" || c.Version != 1700000000000 {
		t.Fatalf("parseColumn: %+v, %v", c, err)
	}
	if s, _ := c.Value.Str(); s != "a@1" {
		t.Fatalf("parseColumn value: %q", s)
	}
}
