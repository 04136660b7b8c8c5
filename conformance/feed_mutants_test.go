package conformance_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
)

// The change feed cases (SPEC §15) must be able to fail too: as
// TestSuiteCatchesMutants does, TestSuiteCatchesFeedMutants runs them
// against the local engine with one feed bug planted at a time.

const feedMutantEnv = "TABLEKIT_CONFORMANCE_FEED_MUTANT"

var feedMutants = map[string]string{
	"feedClaimedRefuses":   "S15_ChangeFeed/Refused",
	"feedDropsLast":        "S15_ChangeFeed/EveryKindOfWrite",
	"feedIncrementAsIs":    "S15_ChangeFeed/EveryKindOfWrite",
	"feedPageReversed":     "S15_ChangeFeed/PerRowOrder16Writers",
	"feedResumeSkipsOne":   "S15_ChangeFeed/ResumeFromEveryCheckpoint",
	"feedRetentionIgnored": "S15_ChangeFeed/Retention",
	"feedDisableIgnored":   "S15_ChangeFeed/DisableEndsTheFeed",
}

func TestSuiteCatchesFeedMutants(t *testing.T) {
	runMutants(t, feedMutantEnv, "TestFeedMutant", feedMutants, nil)
}

// TestFeedMutant is the child process's test: the suite against one
// feed mutant.
func TestFeedMutant(t *testing.T) {
	m := os.Getenv(feedMutantEnv)
	if m == "" {
		t.Skip("only in a child process of TestSuiteCatchesFeedMutants")
	}
	if _, ok := feedMutants[m]; !ok {
		t.Fatalf("unknown mutant %q", m)
	}
	conformance.RunTests(t, newLocalStore(func(b tablekit.Backend) tablekit.Backend { return &feedMutant{Backend: b, m: m} }))
}

// feedMutant is the local engine (with its feed) with the bug named m.
type feedMutant struct {
	tablekit.Backend
	m string
}

func (b *feedMutant) feeder() tablekit.ChangeFeeder { return b.Backend.(tablekit.ChangeFeeder) }

func (b *feedMutant) SetChangeFeed(ctx context.Context, req *tablekit.SetChangeFeedRequest) (*tablekit.ChangeFeedStatus, error) {
	switch {
	case b.m == "feedClaimedRefuses":
		return nil, tablekit.Errorf(tablekit.ErrUnimplemented, "mutant")
	case b.m == "feedRetentionIgnored" && req.Enabled:
		r := *req
		r.Retention = 24 * time.Hour
		req = &r
	case b.m == "feedDisableIgnored" && !req.Enabled:
		return b.feeder().DescribeChangeFeed(ctx, req.Meta)
	}
	return b.feeder().SetChangeFeed(ctx, req)
}

func (b *feedMutant) DescribeChangeFeed(ctx context.Context, meta *tablekit.TableMeta) (*tablekit.ChangeFeedStatus, error) {
	return b.feeder().DescribeChangeFeed(ctx, meta)
}

func (b *feedMutant) ReadShard(ctx context.Context, req *tablekit.ReadShardRequest) (*tablekit.ReadShardResponse, error) {
	res, err := b.feeder().ReadShard(ctx, req)
	if err != nil || len(res.Records) == 0 {
		return res, err
	}
	switch b.m {
	case "feedDropsLast":
		if res.Ended || len(res.Records) < req.Limit {
			res.Records = res.Records[:len(res.Records)-1]
		}
	case "feedIncrementAsIs":
		for i, r := range res.Records {
			if r.Kind == tablekit.WriteUpdate && len(r.Changes) == 1 && r.Changes[0].Column == "n" {
				res.Records[i].Changes = []tablekit.Change{tablekit.Increment("n", 5)}
			}
		}
	case "feedPageReversed":
		slices.Reverse(res.Records)
	case "feedResumeSkipsOne":
		if req.From != "" {
			res.Records = res.Records[1:]
		}
	}
	return res, nil
}

// The self-test's counting wrapper forwards the local engine's feed, so
// that TestSuiteOnLocalEngine runs the §15 cases of a backend that claims
// one.

func (c *counting) SetChangeFeed(ctx context.Context, req *tablekit.SetChangeFeedRequest) (*tablekit.ChangeFeedStatus, error) {
	c.n()
	return c.Backend.(tablekit.ChangeFeeder).SetChangeFeed(ctx, req)
}

func (c *counting) DescribeChangeFeed(ctx context.Context, meta *tablekit.TableMeta) (*tablekit.ChangeFeedStatus, error) {
	c.n()
	return c.Backend.(tablekit.ChangeFeeder).DescribeChangeFeed(ctx, meta)
}

func (c *counting) ReadShard(ctx context.Context, req *tablekit.ReadShardRequest) (*tablekit.ReadShardResponse, error) {
	c.n()
	return c.Backend.(tablekit.ChangeFeeder).ReadShard(ctx, req)
}
