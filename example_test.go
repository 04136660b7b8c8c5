package tablekit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

func Example() {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()

	err := db.CreateTable(ctx, tablekit.TableMeta{
		Name: "users",
		Key:  tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}},
	})
	if err != nil {
		panic(err)
	}
	users := db.Table("users")
	key := tablekit.Key("id", tablekit.String("u1"))
	err = users.PutRow(ctx, key, []tablekit.Column{
		{Name: "name", Value: tablekit.String("Ada")},
		{Name: "logins", Value: tablekit.Integer(0)},
	}, tablekit.ExpectNotExist)
	if err != nil {
		panic(err)
	}
	res, err := users.UpdateRow(ctx, key, []tablekit.Change{tablekit.Increment("logins", 1)})
	if err != nil {
		panic(err)
	}
	fmt.Println("logins:", res.Increments[0].Value)

	// A second create of the same row fails its condition; nothing is written.
	err = users.PutRow(ctx, key, nil, tablekit.ExpectNotExist)
	fmt.Println(errors.Is(err, tablekit.ErrConditionFailed))

	row, found, err := users.GetRow(ctx, key)
	if err != nil {
		panic(err)
	}
	name, _ := row.Get("name")
	fmt.Println(found, name)
	// Output:
	// logins: 1
	// true
	// true Ada
}

// Rows streams a range in key order, page by page, in constant memory.
func ExampleTable_Rows() {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	must(db.CreateTable(ctx, tablekit.TableMeta{
		Name: "events",
		Key:  tablekit.KeySchema{{Name: "device", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger}},
	}))
	events := db.Table("events")
	for i := range 5 {
		k := tablekit.Key("device", tablekit.String("d1")).Add("seq", tablekit.Integer(int64(i)))
		must(events.PutRow(ctx, k, []tablekit.Column{{Name: "temp", Value: tablekit.Double(20 + float64(i)/2)}}))
	}
	start := tablekit.Key("device", tablekit.String("d1")).Add("seq", tablekit.InfMax)
	end := tablekit.Key("device", tablekit.String("d1")).Add("seq", tablekit.InfMin)
	for row, err := range events.Rows(ctx, start, end, tablekit.Backward(), tablekit.Limit(3)) {
		if err != nil {
			panic(err)
		}
		temp, _ := row.Get("temp")
		fmt.Println(row.Key[1].Value, temp)
	}
	// Output:
	// 4 22
	// 3 21.5
	// 2 21
}

// A ManualClock makes TTL deterministic in tests: SPEC §6's worked example.
func ExampleManualClock() {
	ctx := context.Background()
	version := time.Date(2016, 7, 20, 0, 0, 0, 0, time.UTC)
	clock := tablekit.NewManualClock(version)
	db := tablekit.NewClient(localengine.New(), tablekit.WithClock(clock))
	defer db.Close()
	must(db.CreateTable(ctx, tablekit.TableMeta{
		Name:    "sessions",
		Key:     tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}},
		Options: tablekit.TableOptions{TTL: 86400 * time.Second},
	}))
	sessions := db.Table("sessions")
	key := tablekit.Key("id", tablekit.String("s1"))
	must(sessions.PutRow(ctx, key, []tablekit.Column{{Name: "user", Value: tablekit.String("u1"), Version: version.UnixMilli()}}))

	clock.Set(version.Add(24*time.Hour - time.Millisecond))
	_, found, err := sessions.GetRow(ctx, key)
	must(err)
	fmt.Println("at 23:59:59.999 visible:", found)

	clock.Set(version.Add(24 * time.Hour))
	_, found, err = sessions.GetRow(ctx, key)
	must(err)
	fmt.Println("at 00:00:00.000 visible:", found)
	err = sessions.PutRow(ctx, key, []tablekit.Column{{Name: "user", Value: tablekit.String("u1"), Version: version.UnixMilli()}})
	fmt.Println("rewrite refused:", errors.Is(err, tablekit.ErrInvalidArgument))
	// Output:
	// at 23:59:59.999 visible: true
	// at 00:00:00.000 visible: false
	// rewrite refused: true
}

// GetRange answers one page and a token; ResumeFrom continues exactly where
// the page ended, even if rows were written in between.
func ExampleTable_GetRange() {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	must(db.CreateTable(ctx, tablekit.TableMeta{Name: "items", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}))
	items := db.Table("items")
	for i := range 5 {
		must(items.PutRow(ctx, tablekit.Key("id", tablekit.Integer(int64(i*10))), nil))
	}
	start, end := tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)
	page, err := items.GetRange(ctx, start, end, tablekit.Limit(2))
	must(err)
	fmt.Println(len(page.Rows), page.Rows[1].Key)

	// A row written after the page, inside the rest of the range, is not missed.
	must(items.PutRow(ctx, tablekit.Key("id", tablekit.Integer(15)), nil))
	for page.Next != nil {
		page, err = items.GetRange(ctx, start, end, tablekit.Limit(2), tablekit.ResumeFrom(page.Next))
		must(err)
		for _, r := range page.Rows {
			fmt.Println(r.Key)
		}
	}
	// Output:
	// 2 (id=Integer(10))
	// (id=Integer(15))
	// (id=Integer(20))
	// (id=Integer(30))
	// (id=Integer(40))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
