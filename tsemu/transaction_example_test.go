package tsemu_test

import (
	"fmt"
	"log"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

// Example_localTransaction writes an order and its line in one local
// transaction with the official Go SDK: invisible to other readers until
// committed, and the partition key locked meanwhile. A ManualClock expires
// a forgotten transaction without waiting its 60 seconds.
func Example_localTransaction() {
	clock := tablekit.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	backend := localengine.New() // a Backend with atomic writes: localengine, fileengine, DynamoDB...
	defer backend.Close()
	srv, err := tsemu.NewServer(tsemu.Options{Backend: backend, Clock: clock})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.RetryTimes = 0
	client := tablestore.NewClientWithConfig(srv.Endpoint(), srv.InstanceName(), srv.AccessKeyID(), srv.AccessKeySecret(), "", cfg)

	meta := &tablestore.TableMeta{TableName: "orders"}
	meta.AddPrimaryKeyColumn("customer", tablestore.PrimaryKeyType_STRING)
	meta.AddPrimaryKeyColumn("item", tablestore.PrimaryKeyType_STRING)
	if _, err := client.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta,
		TableOption: tablestore.NewTableOption(-1, 1), ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
		log.Fatal(err)
	}
	key := func(item string) *tablestore.PrimaryKey {
		k := &tablestore.PrimaryKey{}
		k.AddPrimaryKeyColumn("customer", "c1")
		k.AddPrimaryKeyColumn("item", item)
		return k
	}
	put := func(txn *string, item, col string, v any) error {
		ch := &tablestore.PutRowChange{TableName: "orders", PrimaryKey: key(item), TransactionId: txn}
		ch.AddColumn(col, v)
		ch.SetCondition(tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST)
		_, err := client.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
		return err
	}
	exists := func(item string) bool {
		r, err := client.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
			TableName: "orders", PrimaryKey: key(item), MaxVersion: 1}})
		if err != nil {
			log.Fatal(err)
		}
		return len(r.Columns) > 0
	}

	start := &tablestore.StartLocalTransactionRequest{TableName: "orders", PrimaryKey: &tablestore.PrimaryKey{}}
	start.PrimaryKey.AddPrimaryKeyColumn("customer", "c1") // the partition key only
	tx, err := client.StartLocalTransaction(start)
	if err != nil {
		log.Fatal(err)
	}
	if err := put(tx.TransactionId, "order-1", "total", int64(30)); err != nil {
		log.Fatal(err)
	}
	if err := put(tx.TransactionId, "order-1/line-1", "sku", "hat"); err != nil {
		log.Fatal(err)
	}
	fmt.Println("before commit:", exists("order-1"))
	// Another writer to customer c1 is refused while the transaction runs.
	err = put(nil, "order-2", "total", int64(5))
	fmt.Println(err.(*tablestore.OtsError).Code)
	if _, err := client.CommitTransaction(&tablestore.CommitTransactionRequest{TransactionId: tx.TransactionId}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("after commit:", exists("order-1"), exists("order-1/line-1"))

	// A transaction left open is aborted after 60 s idle.
	tx, err = client.StartLocalTransaction(start)
	if err != nil {
		log.Fatal(err)
	}
	if err := put(tx.TransactionId, "order-3", "total", int64(7)); err != nil {
		log.Fatal(err)
	}
	clock.Advance(61 * time.Second)
	_, err = client.CommitTransaction(&tablestore.CommitTransactionRequest{TransactionId: tx.TransactionId})
	fmt.Println(err.(*tablestore.OtsError).Code, exists("order-3"))
	// Output:
	// before commit: false
	// OTSRowOperationConflict
	// after commit: true true
	// OTSSessionNotExist false
}
