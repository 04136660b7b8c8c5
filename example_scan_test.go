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
