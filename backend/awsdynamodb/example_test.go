package awsdynamodb_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
)

// Open the adapter on a DynamoDB-compatible server (here the package's
// dynalite; for AWS, leave AWS nil for the default configuration and
// credential chain, and set no endpoint), create a table with 4 shard keys and read one partition key's
// rows in order.
func Example() {
	ctx := context.Background()
	if endpoint == "" {
		fmt.Println("dynalite is not installed: run `npm ci` at the repository root")
		return
	}
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("id", "secret", "")}
	be, err := awsdynamodb.Open(ctx, &awsdynamodb.Options{AWS: &cfg, Endpoint: endpoint, Shards: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	db := tablekit.NewClient(be)
	defer db.Close()

	name := uniqueName("example_orders")
	err = db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{
		{Name: "customer", Type: tablekit.TypeString},
		{Name: "id", Type: tablekit.TypeInteger},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.DeleteTable(ctx, name)
	orders := db.Table(name)
	for i, c := range []string{"c1", "c2", "c1", "c3", "c1"} {
		key := tablekit.Key("customer", tablekit.String(c)).Add("id", tablekit.Integer(int64(10-i)))
		if err := orders.PutRow(ctx, key, []tablekit.Column{{Name: "total", Value: tablekit.Integer(int64(100 * i))}}); err != nil {
			fmt.Println(err)
			return
		}
	}
	// One partition key: a single Query on its shard.
	res, err := orders.GetRange(ctx,
		tablekit.Key("customer", tablekit.String("c1")).Add("id", tablekit.InfMin),
		tablekit.Key("customer", tablekit.String("c1")).Add("id", tablekit.InfMax))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res.Rows {
		total, _ := r.Get("total")
		fmt.Println(r.Key, total)
	}
	shards, nativeTTL, _ := be.TableLayout(ctx, name)
	fmt.Println("shards:", shards, "native TTL:", nativeTTL)
	// Output:
	// (customer=String("c1"), id=Integer(6)) 400
	// (customer=String("c1"), id=Integer(8)) 200
	// (customer=String("c1"), id=Integer(10)) 0
	// shards: 4 native TTL: false
}
