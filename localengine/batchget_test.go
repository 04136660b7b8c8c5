package localengine_test

import (
	"testing"

	"github.com/tablekit/tablekit/internal/testkit/batchcheck"
	"github.com/tablekit/tablekit/localengine"
)

// BatchGetRow returns what GetRow returns, request by request, across
// many spans (8 rows each: a batch crosses them).
func TestBatchGetRowMatchesGetRow(t *testing.T) {
	batchcheck.Run(t, localengine.NewWithSpanRows(8))
}
