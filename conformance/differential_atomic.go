package conformance

import "github.com/tablekit/tablekit"

// genAtomicWrite is an atomic write (SPEC §13) of 1 to 5 writes to one
// table, their keys sharing the first one's partition key (rarely not, or
// one row twice: refused on both sides). It is in the mix only when both
// sides claim atomic writes (differ.atomic), in place of some batch
// writes, so a backend without them runs the same sequence as before. Its
// outcome is a batch write's: all results, or one error and nothing
// written (batchWriteOp.observe applies every write or none).
func (d *differ) genAtomicWrite() operation {
	o := &batchWriteOp{now: d.now(), atomic: true}
	tb := d.table()
	var first tablekit.PrimaryKey
	n := 1 + d.intn(5)
	if len(tb.meta.Key) < 2 {
		n = 1 // one key column: one row per partition key
	}
	for range n {
		key := d.key(tb)
		if first == nil {
			first = key
		} else if len(key) > 0 && len(first) > 0 && !d.chance(0.05) {
			key = key.Clone()
			key[0] = first[0]
		}
		bw := batchWriteEntry{tb: tb}
		switch d.intn(3) {
		case 0:
			bw.w = tablekit.BatchPut(tb.name, key, d.putColumns(tb), d.cond())
		case 1:
			bw.w = tablekit.BatchUpdate(tb.name, key, d.changes(tb, key), d.cond())
		default:
			bw.w = tablekit.BatchDelete(tb.name, key, d.cond())
		}
		o.writes = append(o.writes, bw)
	}
	return o
}
