package rowmodel

import (
	"slices"
	"time"

	"github.com/tablekit/tablekit"
)

// ChangeOf is SPEC §15's rule for the change record of a committed write:
// a put's cells as ChangePut with their versions, an update's changes as
// applied (an Increment as the ChangePut of its result, from res, at its
// version), a delete with no changes; the commit time is the write's Now.
// Shard and Checkpoint are the feed's to set. Every backend with a feed
// records what ChangeOf returns, so feeds agree across backends.
func ChangeOf(w *tablekit.WriteRequest, res *tablekit.UpdateResult) tablekit.ChangeRecord {
	rec := tablekit.ChangeRecord{Key: slices.Clone(w.Key), Kind: w.Kind, CommitTime: time.UnixMilli(w.Now).UTC()}
	switch w.Kind {
	case tablekit.WritePut:
		rec.Changes = make([]tablekit.Change, len(w.Columns))
		for i, c := range w.Columns {
			v := c.Version
			if v == 0 {
				v = w.Now
			}
			rec.Changes[i] = tablekit.PutAt(c.Name, c.Value, v)
		}
	case tablekit.WriteUpdate:
		rec.Changes = make([]tablekit.Change, len(w.Changes))
		inc := 0
		for i, ch := range w.Changes {
			switch ch.Kind {
			case tablekit.ChangeIncrement:
				if res != nil && inc < len(res.Increments) {
					r := res.Increments[inc]
					ch = tablekit.PutAt(ch.Column, r.Value, r.Version)
				}
				inc++
			case tablekit.ChangePut:
				if ch.Version == 0 {
					ch.Version = w.Now
				}
			}
			rec.Changes[i] = ch
		}
	}
	return rec
}
