package tablekit

import (
	"context"
	"errors"
)

// optionsReveal reports whether changing a table's options from old to next
// may make visible values that were hidden (SPEC §5, §6): a higher
// MaxVersions, or a TTL that is longer or gone.
func optionsReveal(old, next TableOptions) bool {
	if next.MaxVersions > max(old.MaxVersions, 1) {
		return true
	}
	return old.TTL != NoExpiry && old.TTL != 0 && (next.TTL == NoExpiry || next.TTL > old.TTL)
}

// backfillRevealed puts the entries that values revealed by new options
// need (SPEC §16: the index follows what is visible). Writes never put
// entries for hidden values, and Reindex removes the entries of values
// that expired or fell behind MaxVersions, so raising either option may
// bring back values without entries; UpdateTable calls this, with the
// table's new metadata, before it returns. Until it has, a read of the
// index may miss a row whose value was just revealed (the new options take
// effect in the backend first: hidden values cannot be read before).
func (c *Client) backfillRevealed(ctx context.Context, m *TableMeta) error {
	for i := range m.Indexes {
		if _, err := c.reindex(ctx, m, m.Indexes[i].Name, false); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var code error = ErrUnavailable
			if te := (*Error)(nil); errors.As(err, &te) && te.Code != nil {
				code = te.Code
			}
			return WrapError(code, err, "the new options are set; the entries of the values they reveal are not all put: run Reindex of index %q", m.Indexes[i].Name)
		}
	}
	return nil
}
