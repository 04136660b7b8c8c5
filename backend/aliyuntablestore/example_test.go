package aliyuntablestore_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

// Open a tablekit client on a Tablestore instance. Here the instance is a
// tsemu server; in production the endpoint is the instance's URL, such as
// https://myinstance.cn-hangzhou.ots.aliyuncs.com.
func Example() {
	ctx := context.Background()
	srv, err := tsemu.NewServer(tsemu.Options{Backend: localengine.New()})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	b, err := aliyuntablestore.Open(ctx, &aliyuntablestore.Options{
		Endpoint: srv.Endpoint(), Instance: srv.InstanceName(),
		AccessKeyID: srv.AccessKeyID(), AccessKeySecret: srv.AccessKeySecret(),
	})
	if err != nil {
		log.Fatal(err)
	}
	db := tablekit.NewClient(b)
	defer db.Close()

	err = db.CreateTable(ctx, tablekit.TableMeta{
		Name: "users",
		Key:  tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}},
	})
	if err != nil {
		log.Fatal(err)
	}
	users := db.Table("users")
	key := tablekit.Key("id", tablekit.String("u1"))
	if err := users.PutRow(ctx, key, []tablekit.Column{{Name: "name", Value: tablekit.String("Ada")}}); err != nil {
		log.Fatal(err)
	}
	res, err := users.UpdateRow(ctx, key, []tablekit.Change{tablekit.Increment("logins", 1)})
	if err != nil {
		log.Fatal(err)
	}
	row, found, err := users.GetRow(ctx, key, tablekit.Columns("name"))
	if err != nil {
		log.Fatal(err)
	}
	name, _ := row.Get("name")
	fmt.Println(found, name, res.Increments[0].Value)

	// A failed condition is ErrConditionFailed; the native error is still there.
	err = users.PutRow(ctx, key, nil, tablekit.ExpectNotExist)
	var oe *tablestore.OtsError
	fmt.Println(errors.Is(err, tablekit.ErrConditionFailed), errors.As(err, &oe) && oe.Code == "OTSConditionCheckFail")
	// Output:
	// true Ada 1
	// true true
}

// Auto-increment key columns (SPEC §14) are Tablestore's AUTO_INCREMENT:
// the server assigns the column when a write passes tablekit.AutoIncrement,
// and ReturnKey (or UpdateResult.Key) gives the key written, the row's
// key from then on. Values are unique and increasing within the partition
// key, not consecutive (a tsemu server over the local engine counts 1, 2…;
// the service's values are large).
func Example_autoIncrement() {
	ctx := context.Background()
	srv, err := tsemu.NewServer(tsemu.Options{Backend: localengine.New()})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	b, err := aliyuntablestore.Open(ctx, &aliyuntablestore.Options{
		Endpoint: srv.Endpoint(), Instance: srv.InstanceName(),
		AccessKeyID: srv.AccessKeyID(), AccessKeySecret: srv.AccessKeySecret(),
	})
	if err != nil {
		log.Fatal(err)
	}
	db := tablekit.NewClient(b)
	defer db.Close()
	err = db.CreateTable(ctx, tablekit.TableMeta{Name: "messages", Key: tablekit.KeySchema{
		{Name: "conversation", Type: tablekit.TypeString},
		{Name: "seq", Type: tablekit.TypeInteger, AutoIncrement: true},
	}})
	if err != nil {
		log.Fatal(err)
	}
	messages := db.Table("messages")
	newMessage := tablekit.Key("conversation", tablekit.String("c1")).Add("seq", tablekit.AutoIncrement)
	var first tablekit.PrimaryKey
	if err := messages.PutRow(ctx, newMessage, []tablekit.Column{{Name: "text", Value: tablekit.String("hello")}}, tablekit.ReturnKey(&first)); err != nil {
		log.Fatal(err)
	}
	res, err := messages.UpdateRow(ctx, newMessage, []tablekit.Change{tablekit.Put("text", tablekit.String("again"))})
	if err != nil {
		log.Fatal(err)
	}
	seq1, _ := first[1].Value.Int()
	seq2, _ := res.Key[1].Value.Int()
	row, found, err := messages.GetRow(ctx, first)
	if err != nil {
		log.Fatal(err)
	}
	text, _ := row.Get("text")
	fmt.Println(seq2 > seq1, found, text)
	// Output:
	// true true hello
}
