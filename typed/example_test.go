package typed_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/typed"
)

type Event struct {
	User string    `tablekit:"user,key"`
	Seq  int64     `tablekit:"seq,key"`
	Kind string    `tablekit:"kind"`
	At   time.Time `tablekit:"at"`
	Note *string   `tablekit:"note"`
}

func Example() {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	_ = db.CreateTable(ctx, tablekit.TableMeta{Name: "events", Key: tablekit.KeySchema{
		{Name: "user", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger}}})
	events := typed.Of[Event](db.Table("events"))

	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var batch []Event
	for i := range 500 { // any number of rows: chunked into batches for you
		batch = append(batch, Event{User: "ann", Seq: int64(i), Kind: "click", At: at})
	}
	if _, err := typed.PutAll(ctx, db, events, batch); err != nil {
		fmt.Println(err)
	}
	n := 0
	for e, err := range events.PrefixRows(ctx, tablekit.Key("user", tablekit.String("ann"))) {
		if err != nil {
			fmt.Println(err)
			return
		}
		n++
		if e.Seq == 499 {
			fmt.Println(e.Kind, e.At.UTC().Format(time.RFC3339), e.Note == nil)
		}
	}
	fmt.Println(n, "events")
	// Output:
	// click 2026-11-23T12:00:00Z true
	// 500 events
}
