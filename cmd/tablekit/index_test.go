package main

import (
	"strings"
	"testing"
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
