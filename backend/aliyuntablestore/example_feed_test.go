package aliyuntablestore_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

// The change feed (SPEC §15) is Tablestore Stream: enabling it sets the
// table's stream, and the records are GetStreamRecord's.
func Example_changeFeed() {
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
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "users", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}}); err != nil {
		log.Fatal(err)
	}
	users := db.Table("users")
	if _, err := users.EnableChangeFeed(ctx, 48*time.Hour); err != nil {
		log.Fatal(err)
	}
	key := tablekit.Key("id", tablekit.String("u1"))
	if err := users.PutRow(ctx, key, []tablekit.Column{{Name: "name", Value: tablekit.String("Ada")}}); err != nil {
		log.Fatal(err)
	}
	if _, err := users.UpdateRow(ctx, key, []tablekit.Change{tablekit.DeleteColumn("name")}); err != nil {
		log.Fatal(err)
	}
	pos := tablekit.FeedPosition{}
	err = users.FollowChangeFeed(ctx, pos, tablekit.FollowOptions{UntilCaughtUp: true}, func(r tablekit.ChangeRecord) error {
		fmt.Println(r.Kind, r.Key, len(r.Changes), r.Changes[0].Kind, r.Changes[0].Column)
		pos[r.Shard] = r.Checkpoint // where a restarted reader resumes
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// Put (id=String("u1")) 1 Put name
	// Update (id=String("u1")) 1 DeleteColumn name
}
