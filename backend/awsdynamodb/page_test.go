package awsdynamodb

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// A range page reads every row as rowmodel.Read does, whatever the read
// and the stored row (hidden cells, markers, filters, projections), and
// the rows of a page, which share buffers, never overwrite each other.
func TestPageReaderMatchesRowmodel(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	const now = 1_700_000_000_000
	names := []string{"a", "b", "b0", "c", "d_e"}
	value := func() tablekit.Value {
		switch rnd.IntN(6) {
		case 0:
			return tablekit.Integer(rnd.Int64N(5) - 2)
		case 1:
			return tablekit.Double(float64(rnd.IntN(5)) / 2)
		case 2:
			return tablekit.Boolean(rnd.IntN(2) == 0)
		case 3:
			return tablekit.Binary([]byte{byte(rnd.IntN(3))})
		}
		return tablekit.String(strconv.Itoa(rnd.IntN(3)))
	}
	for round := 0; round < 300; round++ {
		opts := tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 1 + rnd.IntN(3), MaxVersionOffset: 86400 * time.Second}
		if rnd.IntN(2) == 0 {
			opts.TTL = 86400 * time.Second
		}
		meta := &tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}, Options: opts}
		spec := tablekit.ReadSpec{MaxVersions: 1 + rnd.IntN(3)}
		if rnd.IntN(3) == 0 {
			spec.TimeRange = &tablekit.TimeRange{Start: now - 2*86400_000 + rnd.Int64N(86400_000), End: now}
		}
		if rnd.IntN(4) == 0 {
			spec.Columns = []string{names[rnd.IntN(len(names))], names[rnd.IntN(len(names))]}
		}
		if rnd.IntN(4) == 0 {
			spec.Filter = tablekit.SingleColumnValue(names[rnd.IntN(len(names))], tablekit.CompareOp(1+rnd.IntN(6)), value())
		}
		var items []map[string]types.AttributeValue
		var want [][]tablekit.Column
		var wantOK []bool
		for i := 0; i < 1+rnd.IntN(12); i++ {
			var r rowmodel.Row
			r.Marker = rnd.IntN(5) == 0
			if !r.Marker {
				// A stored row may hold more versions than MaxVersions (it
				// was lowered) and cells already expired.
				common := rnd.IntN(2) == 0 // most cells at one version
				cv := int64(now) - rnd.Int64N(2*86400_000)
				for _, n := range names {
					if rnd.IntN(3) == 0 {
						continue
					}
					v := cv
					if !common {
						v = int64(now) - rnd.Int64N(2*86400_000)
					}
					for range 1 + rnd.IntN(4) {
						r.Cells = append(r.Cells, tablekit.Column{Name: n, Value: value(), Version: v})
						v -= 1 + rnd.Int64N(86400_000)
					}
				}
			}
			key := tablekit.Key("k", tablekit.Integer(int64(i)))
			enc, err := encodeItem(meta, key, 0, []byte(strconv.Itoa(i)), &r, "")
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, enc.item)
			cols, ok := rowmodel.Read(&r, opts, &spec, now)
			want, wantOK = append(want, cols), append(wantOK, ok)
		}
		pr := newPageReader(meta, &spec, now)
		var got []tablekit.Row
		for i, it := range items {
			row, ok, err := pr.read(tablekit.Key("k", tablekit.Integer(int64(i))), it)
			if err != nil {
				t.Fatal(err)
			}
			if ok != wantOK[i] {
				t.Fatalf("round %d row %d: found %v, rowmodel says %v", round, i, ok, wantOK[i])
			}
			got = append(got, row)
		}
		for i, row := range got {
			if !wantOK[i] {
				continue
			}
			if len(row.Columns) != len(want[i]) {
				t.Fatalf("round %d row %d: %+v, rowmodel says %+v", round, i, row.Columns, want[i])
			}
			for j, c := range row.Columns {
				w := want[i][j]
				if c.Name != w.Name || c.Version != w.Version || !c.Value.Equal(w.Value) || c.Value.Type() != w.Value.Type() {
					t.Fatalf("round %d row %d cell %d: %+v, rowmodel says %+v", round, i, j, c, w)
				}
			}
			if len(row.Columns) != cap(row.Columns) {
				t.Fatalf("round %d row %d: columns have spare capacity %d, appending would overwrite the next row", round, i, cap(row.Columns)-len(row.Columns))
			}
		}
	}
}
