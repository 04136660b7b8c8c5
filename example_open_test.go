package tablekit_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tablekit/tablekit"
	_ "github.com/tablekit/tablekit/localengine" // mem://; a program imports the adapter of each scheme it may be given
)

// A program opens the backend that TABLEKIT_URL names, so it runs unchanged
// on every backend. Open finds the scheme among the adapters the
// program imports; import only those it deploys on (package all imports
// every one, and links every cloud SDK into the binary):
//
//	import (
//		_ "github.com/tablekit/tablekit/backend/awsdynamodb" // dynamodb://
//		_ "github.com/tablekit/tablekit/localengine"         // mem://, for tests
//	)
//
// This example imports localengine only, and falls back to mem:// when
// TABLEKIT_URL is unset.
func ExampleOpen() {
	ctx := context.Background()
	url := os.Getenv(tablekit.EnvURL)
	if url == "" {
		url = "mem://"
	}
	db, err := tablekit.Open(ctx, url)
	if err != nil {
		fmt.Println(err) // an unknown scheme names the registered ones
		return
	}
	defer db.Close()

	const name = "example_open"
	err = db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.DeleteTable(ctx, name) // a store that keeps its data stays as it was
	greetings := db.Table(name)
	key := tablekit.Key("id", tablekit.String("hello"))
	must(greetings.PutRow(ctx, key, []tablekit.Column{{Name: "text", Value: tablekit.String("world")}}, tablekit.ExpectNotExist))
	row, found, err := greetings.GetRow(ctx, key)
	must(err)
	text, _ := row.Get("text")
	fmt.Println(found, text)

	// Every backend answers with the same portable errors.
	err = greetings.PutRow(ctx, key, nil, tablekit.ExpectNotExist)
	fmt.Println(errors.Is(err, tablekit.ErrConditionFailed))
	// Output:
	// true world
	// true
}
