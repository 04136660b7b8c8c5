package gcpbigtable_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"cloud.google.com/go/bigtable"
	"cloud.google.com/go/bigtable/bttest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
)

// Example runs tablekit on an in-process Bigtable emulator and shows the
// row as Bigtable stores it.
func Example() {
	ctx := context.Background()
	srv, err := bttest.NewServer("localhost:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	b, err := gcpbigtable.Open(ctx, &gcpbigtable.Options{
		Project:      "my-project",
		Instance:     "my-instance",
		ClientConfig: bigtable.ClientConfig{MetricsProvider: bigtable.NoopMetricsProvider{}},
		ClientOptions: []option.ClientOption{
			option.WithEndpoint(srv.Addr), option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	clock := tablekit.NewManualClock(time.Date(2016, 7, 20, 0, 0, 0, 0, time.UTC))
	db := tablekit.NewClient(b, tablekit.WithClock(clock))
	defer db.Close()

	err = db.CreateTable(ctx, tablekit.TableMeta{Name: "orders", Key: tablekit.KeySchema{
		{Name: "customer", Type: tablekit.TypeString}, {Name: "ts", Type: tablekit.TypeInteger}}})
	if err != nil {
		log.Fatal(err)
	}
	orders := db.Table("orders")
	key := tablekit.Key("customer", tablekit.String("c42")).Add("ts", tablekit.Integer(7))
	if err := orders.PutRow(ctx, key, []tablekit.Column{{Name: "amount", Value: tablekit.Integer(1250)}}); err != nil {
		log.Fatal(err)
	}
	res, err := orders.UpdateRow(ctx, key, []tablekit.Change{tablekit.Increment("amount", 50)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("incremented:", res.Increments[0].Value)

	// The same row through the native client, which the Client offers with
	// As; the table's id carries its incarnation.
	var native *bigtable.Client
	if !db.As(&native) {
		log.Fatal("the backend offers no *bigtable.Client")
	}
	meta, err := db.DescribeTable(ctx, "orders")
	if err != nil {
		log.Fatal(err)
	}
	raw, err := native.Open(gcpbigtable.TableID("orders", meta.Incarnation)).ReadRow(ctx, "c42\x00\x01=0000000000000000007", bigtable.RowFilter(bigtable.FamilyFilter("c")))
	if err != nil {
		log.Fatal(err)
	}
	for _, cell := range raw["c"] {
		fmt.Printf("%s @ %s = %q\n", cell.Column, cell.Timestamp.Time().UTC().Format(time.RFC3339), cell.Value)
	}
	// Output:
	// incremented: 1300
	// c:amount @ 2016-07-20T00:00:00Z = "i1300"
}
