package enginekit_test

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/enginekit"
)

func TestSeqCheckpoint(t *testing.T) {
	meta := &tablekit.TableMeta{Name: "t"}
	for _, seq := range []uint64{0, 1, 41, 1<<64 - 1} {
		req := &tablekit.ReadShardRequest{Meta: meta, Shard: "s-2", From: enginekit.SeqCheckpoint("s-2", seq)}
		if got, err := enginekit.ParseSeqCheckpoint(req); err != nil || got != seq {
			t.Errorf("round trip of %d: %d, %v", seq, got, err)
		}
	}
	if got, err := enginekit.ParseSeqCheckpoint(&tablekit.ReadShardRequest{Meta: meta, Shard: "s-2"}); err != nil || got != 0 {
		t.Errorf("no checkpoint: %d, %v; want 0, nil", got, err)
	}
	for _, from := range []string{"s-1/4", "s-2", "s-2/", "s-2/-1", "s-2/x", "/4", "s-2/18446744073709551616"} {
		_, err := enginekit.ParseSeqCheckpoint(&tablekit.ReadShardRequest{Meta: meta, Shard: "s-2", From: tablekit.Checkpoint(from)})
		if !errors.Is(err, tablekit.ErrInvalidArgument) {
			t.Errorf("checkpoint %q of shard s-2: %v, want ErrInvalidArgument", from, err)
		}
	}
}
