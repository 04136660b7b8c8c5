package fileengine

import (
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
)

// TestMetaFormatSeconds pins format 1 of stored metadata: TTL and
// MaxVersionOffset in seconds, whatever unit TableOptions uses in Go.
func TestMetaFormatSeconds(t *testing.T) {
	m := &tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}},
		Options:     tablekit.TableOptions{TTL: 2 * 24 * time.Hour, MaxVersions: 3, MaxVersionOffset: time.Hour},
		Incarnation: "0123456789abcdef", Generation: 4}
	b, err := encodeMeta(m, m.Incarnation)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"Options":{"TTL":172800,"MaxVersions":3,"MaxVersionOffset":3600}`; !strings.Contains(string(b), want) {
		t.Fatalf("stored meta %s does not contain %s", b, want)
	}
	if strings.Contains(string(b), `"Rows"`) {
		t.Fatalf("stored meta %s names a rows id: the Incarnation is one", b)
	}
	got, rows, err := decodeMeta(b)
	if err != nil {
		t.Fatal(err)
	}
	if rows != m.Incarnation {
		t.Fatalf("rows id %q, want the Incarnation %q", rows, m.Incarnation)
	}
	if got.Options != m.Options || got.Name != m.Name || got.Incarnation != m.Incarnation || got.Generation != m.Generation || len(got.Key) != 1 || got.Key[0] != m.Key[0] {
		t.Fatalf("decodeMeta(encodeMeta(m)) = %+v, want %+v", got, *m)
	}
	// A record written before TableOptions held durations reads the same.
	old := `{"v":1,"meta":{"Name":"t","Key":[{"Name":"id","Type":2}],"Options":{"TTL":-1,"MaxVersions":1,"MaxVersionOffset":86400},"Incarnation":"x","Generation":1}}`
	got, rows, err = decodeMeta([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if got.Options.TTL != tablekit.NoExpiry || got.Options.MaxVersionOffset != 24*time.Hour || rows != "x" {
		t.Fatalf("old record decoded to options %+v, rows id %q", got.Options, rows)
	}
	// A table without an Incarnation keeps its rows id in the record.
	m.Incarnation = ""
	if b, err = encodeMeta(m, "-42"); err != nil {
		t.Fatal(err)
	}
	if got, rows, err = decodeMeta(b); err != nil || got.Incarnation != "" || rows != "-42" {
		t.Fatalf("a table without an Incarnation: decoded %q, rows id %q, %v; want \"\" and \"-42\"", got.Incarnation, rows, err)
	}
}
