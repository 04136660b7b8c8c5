package typed_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/typed"
)

func messages(t *testing.T) (*tablekit.Client, *typed.Table[Message]) {
	t.Helper()
	db := tablekit.NewClient(localengine.New())
	t.Cleanup(func() { db.Close() })
	err := db.CreateTable(context.Background(), tablekit.TableMeta{Name: "messages", Key: tablekit.KeySchema{
		{Name: "conversation", Type: tablekit.TypeString},
		{Name: "seq", Type: tablekit.TypeInteger, AutoIncrement: true}}})
	if err != nil {
		t.Fatal(err)
	}
	return db, typed.Of[Message](db.Table("messages"))
}

func TestAutoIncrementFilledIn(t *testing.T) {
	ctx := context.Background()
	db, msgs := messages(t)
	m := Message{Conversation: "c", Text: "one"}
	if err := msgs.Put(ctx, &m); err != nil || m.Seq != 1 {
		t.Fatalf("Put: seq %d, %v; want 1", m.Seq, err)
	}
	// A non-zero field is a real key: Put replaces that row.
	m.Text = "uno"
	if err := msgs.Put(ctx, &m); err != nil || m.Seq != 1 {
		t.Fatalf("Put of row 1: seq %d, %v", m.Seq, err)
	}
	u := Message{Conversation: "c", Text: "two"}
	if err := msgs.Update(ctx, &u); err != nil || u.Seq != 2 {
		t.Fatalf("Update: seq %d, %v; want 2", u.Seq, err)
	}
	f := Message{Conversation: "c", Text: "three"}
	if err := msgs.UpdateFields(ctx, &f, []string{"Text"}); err != nil || f.Seq != 3 {
		t.Fatalf("UpdateFields: seq %d, %v; want 3", f.Seq, err)
	}
	w, err := msgs.PutWrite(&Message{Conversation: "c", Text: "four"})
	if err != nil || !w.Key[1].Value.IsAutoIncrement() {
		t.Fatalf("PutWrite: key %v, %v; want AutoIncrement in seq", w.Key, err)
	}
	res, err := db.BatchWriteRow(ctx, []tablekit.BatchWrite{w})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res)
	}
	var four Message
	if err := msgs.SetKey(&four, res[0].Key); err != nil || four.Seq != 4 || four.Conversation != "c" {
		t.Fatalf("SetKey: %+v, %v", four, err)
	}
	all := []Message{{Conversation: "c", Text: "five"}, {Conversation: "d", Text: "one"}, {Conversation: "c", Seq: 1, Text: "ONE"}}
	if _, err := typed.PutAll(ctx, db, msgs, all); err != nil {
		t.Fatal(err)
	}
	if all[0].Seq != 5 || all[1].Seq != 1 || all[2].Seq != 1 {
		t.Fatalf("PutAll filled in %d, %d, %d; want 5, 1, 1", all[0].Seq, all[1].Seq, all[2].Seq)
	}
	var got []string
	for m, err := range msgs.PrefixRows(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.Conversation+":"+m.Text)
	}
	want := []string{"c:ONE", "c:two", "c:three", "c:four", "c:five", "d:one"}
	if len(got) != len(want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("rows %q, want %q", got, want)
		}
	}
}

type aiNotKey struct {
	ID  string `tablekit:"id,key"`
	Seq int64  `tablekit:"seq,autoincrement"`
}

type aiString struct {
	ID  string `tablekit:"id,key"`
	Seq string `tablekit:"seq,key,autoincrement"`
}

type aiTwo struct {
	ID string `tablekit:"id,key"`
	A  int64  `tablekit:"a,key,autoincrement"`
	B  int64  `tablekit:"b,key,autoincrement"`
}

func TestAutoIncrementTagRefused(t *testing.T) {
	for name, v := range map[string]any{"not a key": &aiNotKey{}, "a string": &aiString{}, "two": &aiTwo{}} {
		_, _, err := typed.Marshal(v)
		if !errors.Is(err, tablekit.ErrInvalidArgument) {
			t.Errorf("%s: Marshal: %v, want ErrInvalidArgument", name, err)
		}
	}
}
