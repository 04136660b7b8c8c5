package faults

import (
	"context"

	"github.com/tablekit/tablekit"
)

// WriteIndexed (tablekit.IndexWriter) is the wrapped backend's, with the
// Write faults of the row and of each entry: the rules are decided for
// every row the one call writes, as if each were a call wrapping the rest,
// so a fault before the call fails it whole (nothing written) and a lost
// answer is that of a call that was applied, row and entries. Where the
// wrapped backend has none it answers tablekit.ErrSkip (the Client then
// puts the entries and writes the row, each with its own faults; a write
// whose key holds tablekit.AutoIncrement, which only the one call can
// make, then fails with ErrUnimplemented, nothing written). The entries
// of such a write reach the rules with the placeholder in their keys: the
// wrapped backend assigns the value.
func (w *backend) WriteIndexed(ctx context.Context, req *tablekit.WriteRequest, entries []*tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	iw, err := inside[tablekit.IndexWriter](w)
	if err != nil {
		return nil, err
	}
	call := func() (*tablekit.UpdateResult, error) { return iw.WriteIndexed(ctx, req, entries) }
	for _, q := range entries {
		inner := call
		call = func() (*tablekit.UpdateResult, error) {
			return do(ctx, w, OpWrite, q.Meta.Name, q.Key.String(), inner)
		}
	}
	return do(ctx, w, OpWrite, req.Meta.Name, req.Key.String(), call)
}
