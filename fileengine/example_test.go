package fileengine_test

import (
	"context"
	"fmt"
	"os"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
)

// Open a durable store in a directory and use it through a tablekit.Client;
// closing the client closes the engine and releases the directory.
func Example() {
	dir, err := os.MkdirTemp("", "tables")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	eng, err := fileengine.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	db := tablekit.NewClient(eng)
	err = db.CreateTable(ctx, tablekit.TableMeta{
		Name: "users",
		Key:  tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}},
	})
	if err != nil {
		panic(err)
	}
	key := tablekit.Key("id", tablekit.String("u1"))
	err = db.Table("users").PutRow(ctx, key, []tablekit.Column{{Name: "name", Value: tablekit.String("Ada")}})
	if err != nil {
		panic(err)
	}
	if err := db.Close(); err != nil {
		panic(err)
	}

	// Everything acknowledged is there after a restart.
	eng, err = fileengine.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	db = tablekit.NewClient(eng)
	defer db.Close()
	row, found, err := db.Table("users").GetRow(ctx, key)
	if err != nil {
		panic(err)
	}
	name, _ := row.Get("name")
	fmt.Println(found, name)
	// Output: true Ada
}

// Read a range with Table.Scan: the file engine lends each row (decoded
// into buffers it reuses) instead of copying it out, so the row is valid
// until the next iteration; its strings may be kept, and Clone keeps a row.
func Example_scan() {
	dir, err := os.MkdirTemp("", "tables")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	eng, err := fileengine.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	db := tablekit.NewClient(eng)
	defer db.Close()
	err = db.CreateTable(ctx, tablekit.TableMeta{
		Name: "scores",
		Key:  tablekit.KeySchema{{Name: "player", Type: tablekit.TypeString}},
	})
	if err != nil {
		panic(err)
	}
	scores := db.Table("scores")
	for i, p := range []string{"ada", "bob", "cy"} {
		err := scores.PutRow(ctx, tablekit.Key("player", tablekit.String(p)), []tablekit.Column{{Name: "points", Value: tablekit.Integer(int64(10 * (i + 1)))}})
		if err != nil {
			panic(err)
		}
	}
	var best tablekit.Row
	for row, err := range scores.Scan(ctx, tablekit.Key("player", tablekit.InfMin), tablekit.Key("player", tablekit.InfMax)) {
		if err != nil {
			panic(err)
		}
		player, _ := row.Key[0].Value.Str() // a string may be kept
		points, _ := row.Columns[0].Value.Int()
		fmt.Println(player, points)
		if points >= 20 && best.Key == nil {
			best = row.Clone() // the row itself is reused: clone it to keep it
		}
	}
	fmt.Println("first with 20:", best.Key)
	// Output:
	// ada 10
	// bob 20
	// cy 30
	// first with 20: (player=String("bob"))
}
