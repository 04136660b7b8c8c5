package tablekit_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// Scan reads a range without copying each row out: a row is valid until the
// next iteration, so the loop keeps what it needs (here a sum and one
// cloned row), not the Row itself.
func ExampleTable_Scan() {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "scores", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		panic(err)
	}
	scores := db.Table("scores")
	for i := range 5 {
		if err := scores.PutRow(ctx, tablekit.Key("id", tablekit.Integer(int64(i))), []tablekit.Column{{Name: "score", Value: tablekit.Integer(int64(10 * i))}}); err != nil {
			panic(err)
		}
	}
	var sum int64
	var best tablekit.Row
	for row, err := range scores.Scan(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)) {
		if err != nil {
			panic(err)
		}
		v, _ := row.Get("score")
		n, _ := v.Int()
		sum += n
		if n == 40 {
			best = row.Clone() // kept past the iteration: a copy
		}
	}
	fmt.Println(sum, best.Key)
	// Output: 100 (id=Integer(4))
}

// Reading a whole table spells no bound: the empty key prefix names every
// row, as bigtable.PrefixRange("") does, whatever the table's key columns.
// PrefixRange gives the same bounds for GetRange's pages or Scan.
func ExampleTable_PrefixRows_wholeTable() {
	ctx := context.Background()
	db, err := tablekit.Open(ctx, "mem://") // tablekit.EnvURL names the backend in a real program
	if err != nil {
		panic(err)
	}
	defer db.Close()
	err = db.CreateTable(ctx, tablekit.TableMeta{Name: "visits", Key: tablekit.KeySchema{
		{Name: "site", Type: tablekit.TypeString}, {Name: "day", Type: tablekit.TypeInteger}}})
	if err != nil {
		panic(err)
	}
	visits := db.Table("visits")
	for _, site := range []string{"b.example", "a.example"} {
		for day := range int64(2) {
			key := tablekit.Key("site", tablekit.String(site)).Add("day", tablekit.Integer(day))
			if err := visits.PutRow(ctx, key, nil); err != nil {
				panic(err)
			}
		}
	}
	for row, err := range visits.PrefixRows(ctx, nil) {
		if err != nil {
			panic(err)
		}
		fmt.Println(row.Key)
	}
	start, end, err := visits.PrefixRange(ctx, nil)
	if err != nil {
		panic(err)
	}
	page, err := visits.GetRange(ctx, end, start, tablekit.Backward(), tablekit.Limit(1)) // backward: from end down to start
	if err != nil {
		panic(err)
	}
	fmt.Println("last:", page.Rows[0].Key)
	// Output:
	// (site=String("a.example"), day=Integer(0))
	// (site=String("a.example"), day=Integer(1))
	// (site=String("b.example"), day=Integer(0))
	// (site=String("b.example"), day=Integer(1))
	// last: (site=String("b.example"), day=Integer(1))
}
