package rowmodel

import (
	"fmt"
	"testing"

	"github.com/tablekit/tablekit"
)

// BenchmarkApplyUpdate is the rule part of a YCSB update (issue 22): ApplyTo
// of an UpdateRow with one Put on a stored row of 10 columns × 100 bytes,
// one version each, under MaxVersions 1 (newest) and 3 (the put adds a
// version; each column holds 3): ApplyTo (new cells on the heap) and
// ApplyInto (on the stack, as the local engine builds them).
//
//	go test -run '^$' -bench ApplyUpdate -count 6 ./rowmodel/
func BenchmarkApplyUpdate(b *testing.B) {
	for _, versions := range []int{1, 3} {
		b.Run(fmt.Sprintf("versions=%d", versions), func(b *testing.B) {
			const now = 1_000_000
			meta := &tablekit.TableMeta{Name: "t", Generation: 1,
				Options: tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: versions}}
			val := tablekit.Binary(make([]byte, 100))
			var old Row
			for f := range 10 {
				for v := range versions {
					old.Cells = append(old.Cells, tablekit.Column{Name: fmt.Sprintf("field%d", f), Value: val, Version: now - 1000 - int64(v)})
				}
			}
			old.Generation = 1
			w := &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WriteUpdate, Now: now,
				Changes: []tablekit.Change{{Kind: tablekit.ChangePut, Column: "field4", Value: val, Version: now}}}
			b.Run("ApplyTo", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					var next Row
					keep, _, err := ApplyTo(&next, &old, w)
					if err != nil || !keep || len(next.Cells) != len(old.Cells) {
						b.Fatal(keep, err, len(next.Cells))
					}
				}
			})
			b.Run("ApplyInto", func(b *testing.B) { // the cells on the stack, as the local engine builds them
				b.ReportAllocs()
				for b.Loop() {
					var buf [32]tablekit.Column
					next, keep, _, err := ApplyInto(buf[:0], &old, w)
					if err != nil || !keep || len(next.Cells) != len(old.Cells) {
						b.Fatal(keep, err, len(next.Cells))
					}
				}
			})
		})
	}
}
