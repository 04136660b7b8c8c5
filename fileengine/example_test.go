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
