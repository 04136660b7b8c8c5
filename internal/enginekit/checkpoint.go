package enginekit

import (
	"strconv"
	"strings"

	"github.com/tablekit/tablekit"
)

// SeqCheckpoint is the checkpoint "shard/seq" of an engine whose shards
// number their records: a reader resuming from it reads the records of
// shard after sequence number seq.
func SeqCheckpoint(shard string, seq uint64) tablekit.Checkpoint {
	return tablekit.Checkpoint(shard + "/" + strconv.FormatUint(seq, 10))
}

// ParseSeqCheckpoint returns the sequence number of req.From, a
// SeqCheckpoint of req.Shard (0 when req.From is empty: the shard's
// start), or ErrInvalidArgument naming the table, the checkpoint and the
// shard.
func ParseSeqCheckpoint(req *tablekit.ReadShardRequest) (uint64, error) {
	if req.From == "" {
		return 0, nil
	}
	id, seq, ok := strings.Cut(string(req.From), "/")
	n, err := strconv.ParseUint(seq, 10, 64)
	if !ok || err != nil || id != req.Shard {
		return 0, tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: checkpoint %.64q is not one of shard %q", req.Meta.Name, req.From, req.Shard)
	}
	return n, nil
}
