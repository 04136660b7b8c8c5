package main

import (
	"strings"
	"testing"
)

// Auto-increment key columns through the binary: create declares one,
// describe shows it, put with AUTO prints the key the store assigned, and
// import assigns one to every row whose key leaves the column out.
func TestAutoIncrement(t *testing.T) {
	t.Parallel()
	url := fileURL(t)
	ok(t, url, "create", "msgs", "--key", "conv:String,seq:Integer:auto")
	if out := ok(t, url, "describe", "msgs"); !strings.Contains(out, "key:                conv:String,seq:Integer:auto\n") {
		t.Errorf("describe does not show the auto-increment column:\n%s", out)
	}
	hdr := ok(t, url, "describe", "msgs", "--json")
	if !strings.Contains(hdr, `{"name":"seq","type":"Integer","auto_increment":true}`) || strings.Contains(hdr, `"conv","type":"String","auto`) {
		t.Errorf("describe --json: %s", hdr)
	}
	for i, want := range []string{"conv=c1,seq=1\n", "conv=c1,seq=2\n", "conv=c2,seq=1\n"} {
		conv := []string{"c1", "c1", "c2"}[i]
		if got := ok(t, url, "put", "msgs", "conv="+conv+",seq=AUTO", "--col", "text=s:hi"); got != want {
			t.Errorf("put %d printed %q, want %q", i, got, want)
		}
	}
	// A real key: put replaces that row and prints nothing.
	if got := ok(t, url, "put", "msgs", "conv=c1,seq=1", "--col", "text=s:edited"); got != "" {
		t.Errorf("put of a real key printed %q", got)
	}
	// AUTO anywhere else: refused, naming the column.
	for _, args := range [][]string{
		{"get", "msgs", "conv=c1,seq=AUTO"},
		{"delete", "msgs", "conv=c1,seq=AUTO"},
		{"put", "msgs", "conv=c1,seq=AUTO", "--if", "exists"},
	} {
		r := tk(t, url, "", args...)
		if r.code == 0 || !strings.Contains(r.stderr, `"seq"`) && !strings.Contains(r.stderr, "condition failed") {
			t.Errorf("%v: exit %d, stderr %q; want a refusal naming seq", args, r.code, r.stderr)
		}
	}
	// import: a key without seq is assigned one, in either row form.
	in := `{"conv":"c1","text":"plain"}` + "\n" +
		`{"key":{"conv":{"s":"c2"}},"columns":{"text":[{"ts":1700000000000,"s":"export form"}]}}` + "\n" +
		`{"conv":"c1","seq":10,"text":"real"}` + "\n"
	if r := tk(t, url, in, "import", "msgs"); r.code != 0 {
		t.Fatalf("import: exit %d: %s", r.code, r.stderr)
	}
	out := ok(t, url, "scan", "msgs", "--columns", "text")
	for _, want := range []string{"conv=c1,seq=1 ", "s:edited", "conv=c1,seq=3 ", "s:plain", "conv=c1,seq=10 ", "s:real", "conv=c2,seq=2 ", `"export form"`} {
		if !strings.Contains(out, want) {
			t.Errorf("scan lacks %q:\n%s", want, out)
		}
	}
	if got := ok(t, url, "count", "msgs"); got != "6\n" {
		t.Errorf("count = %q, want 6", got)
	}
	// A header declaring the column creates the table with it; its rows
	// may leave the column out.
	in = `{"table":"m2","key":[{"name":"p","type":"String"},{"name":"s","type":"Integer","auto_increment":true}],"options":{"ttl":-1,"max_versions":1,"max_version_offset":86400}}` + "\n" +
		`{"p":"x","v":1}` + "\n" + `{"p":"x","v":2}` + "\n"
	if r := tk(t, url, in, "import"); r.code != 0 {
		t.Fatalf("import with a header: exit %d: %s", r.code, r.stderr)
	}
	if out := ok(t, url, "scan", "m2"); !strings.Contains(out, "p=x,s=1 ") || !strings.Contains(out, "p=x,s=2 ") {
		t.Errorf("scan m2:\n%s", out)
	}
	if out := ok(t, url, "ls", "-l"); !strings.Contains(out, "p:String,s:Integer:auto") {
		t.Errorf("ls -l:\n%s", out)
	}
	// A bad declaration: refused before anything is made.
	for _, key := range []string{"seq:Integer:auto,conv:String", "conv:String,seq:String:auto", "conv:String,seq:Integer:automatic"} {
		if r := tk(t, url, "", "create", "bad", "--key", key); r.code == 0 {
			t.Errorf("create --key %s succeeded", key)
		}
	}
}
