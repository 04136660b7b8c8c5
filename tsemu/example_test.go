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

// Example starts a server over an in-memory Backend on a loopback port and
// uses it with the official Tablestore Go SDK. A ManualClock makes TTL
// deterministic.
func Example() {
	clock := tablekit.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	backend := localengine.New() // any tablekit Backend: fileengine, an adapter...
	defer backend.Close()
	srv, err := tsemu.NewServer(tsemu.Options{Backend: backend, Clock: clock})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client := tablestore.NewClient(srv.Endpoint(), srv.InstanceName(), srv.AccessKeyID(), srv.AccessKeySecret())

	meta := &tablestore.TableMeta{TableName: "users"}
	meta.AddPrimaryKeyColumn("id", tablestore.PrimaryKeyType_STRING)
	if _, err := client.CreateTable(&tablestore.CreateTableRequest{
		TableMeta:          meta,
		TableOption:        tablestore.NewTableOption(86400, 1), // TTL one day
		ReservedThroughput: &tablestore.ReservedThroughput{},
	}); err != nil {
		log.Fatal(err)
	}

	key := &tablestore.PrimaryKey{}
	key.AddPrimaryKeyColumn("id", "u1")
	put := &tablestore.PutRowChange{TableName: "users", PrimaryKey: key}
	put.AddColumn("name", "Ada")
	put.SetCondition(tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST)
	if _, err := client.PutRow(&tablestore.PutRowRequest{PutRowChange: put}); err != nil {
		log.Fatal(err)
	}
	get := &tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "users", PrimaryKey: key, MaxVersion: 1,
	}}
	row, err := client.GetRow(get)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(row.Columns[0].ColumnName, row.Columns[0].Value)

	// The same put again fails its condition, as on Tablestore.
	_, err = client.PutRow(&tablestore.PutRowRequest{PutRowChange: put})
	fmt.Println(err.(*tablestore.OtsError).Code)

	// A day later the cell has expired.
	clock.Advance(24 * time.Hour)
	row, err = client.GetRow(get)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(row.Columns))
	// Output:
	// name Ada
	// OTSConditionCheckFail
	// 0
}
