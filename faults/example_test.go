package faults_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/faults"
	"github.com/tablekit/tablekit/localengine"
)

// recordGame is a service's data layer: it stores one game's score exactly
// once, however the store fails. A throttled or unavailable write is
// retried with backoff; the write is conditional (ExpectNotExist), so the
// retry of a write that was applied but whose answer was lost fails its
// condition instead of writing twice, and a read tells whether it was ours.
func recordGame(ctx context.Context, games *tablekit.Table, id int64, score int64) (retries int, err error) {
	key := tablekit.Key("game", tablekit.Integer(id))
	cols := []tablekit.Column{{Name: "score", Value: tablekit.Integer(score)}}
	for attempt := 0; ; attempt++ {
		err := games.PutRow(ctx, key, cols, tablekit.ExpectNotExist)
		switch {
		case err == nil:
			return attempt, nil
		case errors.Is(err, tablekit.ErrConditionFailed) && attempt > 0:
			row, found, rerr := games.GetRow(ctx, key)
			if rerr != nil {
				return attempt, rerr
			}
			if v, _ := row.Get("score"); found && v == cols[0].Value {
				return attempt, nil // our earlier attempt was applied
			}
			return attempt, err
		case errors.Is(err, tablekit.ErrThrottled) || errors.Is(err, tablekit.ErrUnavailable):
			if attempt == 9 {
				return attempt, err
			}
			select {
			case <-ctx.Done():
				return attempt, ctx.Err()
			case <-time.After(time.Duration(1<<attempt) * 100 * time.Microsecond):
			}
		default:
			return attempt, err
		}
	}
}

// A service's retry logic, tested on the local engine with injected
// faults: 30% of writes are throttled and 10% are applied but their answer
// is lost. Every game is stored once, with its score.
func Example_retryLogic() {
	ctx := context.Background()
	inj := faults.New(2026,
		faults.Rule{Ops: faults.OpWrite, Table: "games", Prob: 0.3, Err: tablekit.ErrThrottled},
		faults.Rule{Ops: faults.OpWrite, Table: "games", Prob: 0.1, Lost: true},
	)
	db := tablekit.NewClient(inj.Wrap(localengine.New()))
	defer db.Close()
	err := db.CreateTable(ctx, tablekit.TableMeta{Name: "games", Key: tablekit.KeySchema{{Name: "game", Type: tablekit.TypeInteger}}})
	if err != nil {
		panic(err)
	}
	games := db.Table("games")

	retries := 0
	for id := range int64(100) {
		n, err := recordGame(ctx, games, id, 1000+id)
		if err != nil {
			fmt.Println("game", id, "not recorded:", err)
		}
		retries += n
	}

	inj.Disable() // read back without faults
	stored, wrong := 0, 0
	for row, err := range games.Rows(ctx, tablekit.Key("game", tablekit.InfMin), tablekit.Key("game", tablekit.InfMax)) {
		if err != nil {
			panic(err)
		}
		id, _ := row.Key[0].Value.Int()
		if v, _ := row.Get("score"); v != tablekit.Integer(1000+id) {
			wrong++
		}
		stored++
	}
	fmt.Println("throttled:", inj.Hits(0), "answers lost:", inj.Hits(1), "retries:", retries)
	fmt.Println("stored:", stored, "wrong:", wrong)
	// Output:
	// throttled: 40 answers lost: 12 retries: 48
	// stored: 100 wrong: 0
}
