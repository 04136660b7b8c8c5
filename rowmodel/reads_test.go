package rowmodel

import (
	"testing"

	"github.com/tablekit/tablekit"
)

func TestWriteReads(t *testing.T) {
	col := &tablekit.ColumnFilter{Column: "c", Op: tablekit.Equal, Value: tablekit.Integer(1)}
	for _, tc := range []struct {
		name string
		w    tablekit.WriteRequest
		want Reads
	}{
		{"put", tablekit.WriteRequest{Kind: tablekit.WritePut}, ReadsNothing},
		{"delete", tablekit.WriteRequest{Kind: tablekit.WriteDelete}, ReadsNothing},
		{"update of puts and column deletes", tablekit.WriteRequest{Kind: tablekit.WriteUpdate, Changes: []tablekit.Change{tablekit.Put("a", tablekit.Integer(1)), tablekit.DeleteColumn("b")}}, ReadsNothing},
		{"put if it exists", tablekit.WriteRequest{Kind: tablekit.WritePut, Condition: tablekit.Condition{Row: tablekit.ExpectExist}}, ReadsExistence},
		{"delete if absent", tablekit.WriteRequest{Kind: tablekit.WriteDelete, Condition: tablekit.Condition{Row: tablekit.ExpectNotExist}}, ReadsExistence},
		{"update if it exists", tablekit.WriteRequest{Kind: tablekit.WriteUpdate, Changes: []tablekit.Change{tablekit.Put("a", tablekit.Integer(1))}, Condition: tablekit.Condition{Row: tablekit.ExpectExist}}, ReadsExistence},
		{"put under a column condition", tablekit.WriteRequest{Kind: tablekit.WritePut, Condition: tablekit.Condition{Column: col}}, ReadsRow},
		{"increment", tablekit.WriteRequest{Kind: tablekit.WriteUpdate, Changes: []tablekit.Change{tablekit.Put("a", tablekit.Integer(1)), tablekit.Increment("n", 1)}}, ReadsRow},
		{"delete a version", tablekit.WriteRequest{Kind: tablekit.WriteUpdate, Changes: []tablekit.Change{tablekit.DeleteVersion("a", 5)}, Condition: tablekit.Condition{Row: tablekit.ExpectExist}}, ReadsRow},
	} {
		if got := WriteReads(&tc.w); got != tc.want {
			t.Errorf("%s: WriteReads = %d, want %d", tc.name, got, tc.want)
		}
	}
}
