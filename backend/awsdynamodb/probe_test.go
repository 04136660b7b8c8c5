package awsdynamodb_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/internal/testkit/dynalitetest"
)

// TestDynaliteWithoutParameters: dynalite opened without
// transactions=false and streams=false declares both (Open sends no
// request), but an atomic write and each change-feed call answer
// ErrUnimplemented naming the URL parameter, before writing anything:
// no row, and no feed flag that would make writers stamp their items.
func TestDynaliteWithoutParameters(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	db, err := tablekit.Open(ctx, "dynamodb://?region="+dynalitetest.Region+"&endpoint="+needDynalite(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := uniqueName("noparams")
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "pk", Type: tablekit.TypeString}, {Name: "sk", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	tb := db.Table(name)
	for i := range 2 { // the second answer is the kept one
		_, err = db.AtomicWrite(ctx, []tablekit.BatchWrite{tablekit.BatchPut(name, pk("a", 1), nil), tablekit.BatchPut(name, pk("a", 2), nil)})
		if !errors.Is(err, tablekit.ErrUnimplemented) || !strings.Contains(err.Error(), "transactions=false") {
			t.Errorf("AtomicWrite #%d: %v, want ErrUnimplemented naming transactions=false", i, err)
		}
		_, err = tb.EnableChangeFeed(ctx, 0)
		if !errors.Is(err, tablekit.ErrUnimplemented) || !strings.Contains(err.Error(), "streams=false") {
			t.Errorf("EnableChangeFeed #%d: %v, want ErrUnimplemented naming streams=false", i, err)
		}
	}
	if _, err := tb.ChangeFeed(ctx); !errors.Is(err, tablekit.ErrUnimplemented) || !strings.Contains(err.Error(), "streams=false") {
		t.Errorf("ChangeFeed: %v, want ErrUnimplemented naming streams=false", err)
	}
	if row, found, err := tb.GetRow(ctx, pk("a", 1)); err != nil || found {
		t.Errorf("after the refused atomic write: GetRow = %v, %v; want no row", row, err)
	}
	// The feed flag was not set: a deletion is one DeleteItem, not the
	// stamp and the deletion of a table whose feed is on.
	ct := newCountingTransport()
	b, err := awsdynamodb.New(newClient(t, &http.Client{Transport: ct}), nil)
	if err != nil {
		t.Fatal(err)
	}
	db2 := tablekit.NewClient(b)
	defer db2.Close()
	if err := db2.Table(name).DeleteRow(ctx, pk("a", 1)); err != nil {
		t.Fatal(err)
	}
	if n := ct.get("UpdateItem"); n != 0 {
		t.Errorf("a deletion made %d UpdateItem calls: the feed flag was set by the refused EnableChangeFeed", n)
	}
}

// TestProbeAnswersOnMoto: moto serves TransactWriteItems and DynamoDB
// Streams: the probes let atomic writes and the feed through.
func TestProbeAnswersOnMoto(t *testing.T) {
	ctx := context.Background()
	b := newMotoBackend(t)
	db, tb := newTable(t, b, nil, tablekit.TableOptions{})
	defer db.Close()
	if _, err := db.AtomicWrite(ctx, []tablekit.BatchWrite{tablekit.BatchPut(tb.Name(), pk("a", 1), nil)}); err != nil {
		t.Errorf("AtomicWrite on moto: %v", err)
	}
	if _, err := tb.EnableChangeFeed(ctx, 0); err != nil {
		t.Errorf("EnableChangeFeed on moto: %v", err)
	}
}
