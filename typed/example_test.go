package typed_test

import (
	"context"
	"errors"
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

type Order struct {
	Customer string `tablekit:"customer,key"`
	ID       int64  `tablekit:"id,key"`
	Status   string `tablekit:"status"`
	Total    int64  `tablekit:"total"`
	Hits     int64  `tablekit:"hits"`
}

// A conditional patch: mark an order paid only while it is "pending".
// UpdateFields writes the fields it names and nothing else (Update would
// write the partial struct's zero Total and Hits too); Required makes the
// condition fail on a row without a status, a missing row included.
func ExampleTable_UpdateFields() {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	_ = db.CreateTable(ctx, tablekit.TableMeta{Name: "orders", Key: tablekit.KeySchema{
		{Name: "customer", Type: tablekit.TypeString}, {Name: "id", Type: tablekit.TypeInteger}}})
	orders := typed.Of[Order](db.Table("orders"))
	if err := orders.Put(ctx, &Order{Customer: "c42", ID: 1, Status: "pending", Total: 1250, Hits: 5}); err != nil {
		fmt.Println(err)
		return
	}

	ifPending := tablekit.IfMatch(tablekit.SingleColumnValue("status", tablekit.Equal, tablekit.String("pending")).Required())
	pay := func(id int64) error {
		return orders.UpdateFields(ctx, &Order{Customer: "c42", ID: id, Status: "paid"}, []string{"Status"}, ifPending)
	}
	fmt.Println("pay 1:", pay(1))
	fmt.Println("pay 1 again:", errors.Is(pay(1), tablekit.ErrConditionFailed))
	fmt.Println("pay 2 (no such order):", errors.Is(pay(2), tablekit.ErrConditionFailed))

	o, _, _ := orders.Get(ctx, tablekit.Key("customer", tablekit.String("c42")).Add("id", tablekit.Integer(1)))
	fmt.Printf("%+v\n", o)
	_, found, _ := orders.Get(ctx, tablekit.Key("customer", tablekit.String("c42")).Add("id", tablekit.Integer(2)))
	fmt.Println("order 2 created:", found)
	// Output:
	// pay 1: <nil>
	// pay 1 again: true
	// pay 2 (no such order): true
	// {Customer:c42 ID:1 Status:paid Total:1250 Hits:5}
	// order 2 created: false
}

// StatusChange is one step of an order's history: a row per step, under a
// key column (Step), as seed 001 keeps a purchase history.
type StatusChange struct {
	Order  string `tablekit:"order,key"`
	Step   int64  `tablekit:"step,key"`
	Status string `tablekit:"status"`
}

// A version is a millisecond: writing an order's status three times in one
// millisecond keeps one version, the last. A history that must keep every
// step keeps each in its own row, under a key column, or gives each its
// own version with tablekit.PutAt.
func Example_history() {
	ctx := context.Background()
	clock := tablekit.NewManualClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)) // time stands still
	db := tablekit.NewClient(localengine.New(), tablekit.WithClock(clock))
	defer db.Close()
	_ = db.CreateTable(ctx, tablekit.TableMeta{Name: "orders", Key: tablekit.KeySchema{
		{Name: "customer", Type: tablekit.TypeString}, {Name: "id", Type: tablekit.TypeInteger}},
		Options: tablekit.TableOptions{MaxVersions: 10}})
	_ = db.CreateTable(ctx, tablekit.TableMeta{Name: "order_history", Key: tablekit.KeySchema{
		{Name: "order", Type: tablekit.TypeString}, {Name: "step", Type: tablekit.TypeInteger}}})
	orders := typed.Of[Order](db.Table("orders"))
	history := typed.Of[StatusChange](db.Table("order_history"))

	for i, s := range []string{"placed", "paid", "shipped"} {
		_ = orders.UpdateFields(ctx, &Order{Customer: "c42", ID: 1, Status: s}, []string{"Status"})
		_ = history.Put(ctx, &StatusChange{Order: "c42/1", Step: int64(i), Status: s})
	}

	row, _, _ := db.Table("orders").GetRow(ctx, tablekit.Key("customer", tablekit.String("c42")).Add("id", tablekit.Integer(1)), tablekit.MaxVersions(10))
	fmt.Println("versions of status:", len(row.Versions("status")))
	for c, err := range history.PrefixRows(ctx, tablekit.Key("order", tablekit.String("c42/1"))) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(c.Step, c.Status)
	}
	// Output:
	// versions of status: 1
	// 0 placed
	// 1 paid
	// 2 shipped
}

// A message's sequence number is assigned by the store: the field tagged
// autoincrement is zero when written and filled in by Put.
type Message struct {
	Conversation string `tablekit:"conversation,key"`
	Seq          int64  `tablekit:"seq,key,autoincrement"`
	Text         string `tablekit:"text"`
}

func ExampleTable_Put_autoIncrement() {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	err := db.CreateTable(ctx, tablekit.TableMeta{Name: "messages", Key: tablekit.KeySchema{
		{Name: "conversation", Type: tablekit.TypeString},
		{Name: "seq", Type: tablekit.TypeInteger, AutoIncrement: true}}})
	if err != nil {
		panic(err)
	}
	msgs := typed.Of[Message](db.Table("messages"))
	for _, text := range []string{"hello", "how are you?"} {
		m := Message{Conversation: "c1", Text: text}
		if err := msgs.Put(ctx, &m); err != nil {
			panic(err)
		}
		fmt.Println(m.Seq, m.Text)
	}
	// Two more in one atomic write: both filled in.
	more := []Message{{Conversation: "c1", Text: "fine"}, {Conversation: "c1", Text: "and you?"}}
	if err := msgs.PutAtomic(ctx, more); err != nil {
		panic(err)
	}
	fmt.Println(more[0].Seq, more[1].Seq)
	// Output:
	// 1 hello
	// 2 how are you?
	// 3 4
}
