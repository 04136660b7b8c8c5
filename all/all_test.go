package all_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	_ "github.com/tablekit/tablekit/all"
)

func TestEverySchemeRegistered(t *testing.T) {
	want := []string{"bigtable", "dynamodb", "file", "mem", "tablestore"}
	if got := tablekit.Schemes(); !slices.Equal(got, want) {
		t.Errorf("Schemes() = %q, want %q", got, want)
	}
	// An unknown scheme names every registered one.
	_, err := tablekit.OpenBackend(context.Background(), "postgres://db")
	if !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Fatalf("unknown scheme: err = %v, want ErrInvalidArgument", err)
	}
	for _, s := range want {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("unknown-scheme error %q does not name %s", err, s)
		}
	}
}

// A program picks its backend from TABLEKIT_URL with one import.
func Example() {
	ctx := context.Background()
	db, err := tablekit.Open(ctx, "mem://") // os.Getenv(tablekit.EnvURL) in a program
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	fmt.Println(tablekit.Schemes())
	// Output: [bigtable dynamodb file mem tablestore]
}
