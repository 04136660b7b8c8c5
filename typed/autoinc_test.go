package typed_test

import (
	"context"
	"errors"
	"strings"
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

// plainMessage maps seq, the table's auto-increment column, without the
// autoincrement tag: its zero would be a real key.
type plainMessage struct {
	Conversation string `tablekit:"conversation,key"`
	Seq          int64  `tablekit:"seq,key"`
	Text         string `tablekit:"text"`
}

// A struct field that maps to the table's auto-increment column without
// the autoincrement tag is refused by every write, naming the field, the
// column and the table, before anything is written: its zero would be
// written as the real key 0, silently, and the next Put would replace it.
func TestAutoIncrementColumnNeedsTheTag(t *testing.T) {
	ctx := context.Background()
	db, _ := messages(t)
	plain := typed.Of[plainMessage](db.Table("messages"))
	v := plainMessage{Conversation: "c", Text: "one"}
	vs := []plainMessage{v}
	writes := map[string]func() error{
		"Put":          func() error { return plain.Put(ctx, &v) },
		"Update":       func() error { return plain.Update(ctx, &v) },
		"UpdateFields": func() error { return plain.UpdateFields(ctx, &v, []string{"Text"}) },
		"PutAtomic":    func() error { return plain.PutAtomic(ctx, vs) },
		"PutAll":       func() error { _, err := typed.PutAll(ctx, db, plain, vs); return err },
	}
	for name, write := range writes {
		err := write()
		var te *tablekit.Error
		if !errors.Is(err, tablekit.ErrInvalidArgument) || !errors.As(err, &te) {
			t.Errorf("%s of a struct whose seq lacks the autoincrement tag: %v, want ErrInvalidArgument", name, err)
			continue
		}
		for _, want := range []string{"field Seq", `column "seq"`, `"messages"`, "autoincrement"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q does not say %s", name, err, want)
			}
		}
	}
	if _, found, err := db.Table("messages").GetRow(ctx, tablekit.Key("conversation", tablekit.String("c")).Add("seq", tablekit.Integer(0))); found || err != nil {
		t.Errorf("a refused write wrote the row of seq 0 (%v)", err)
	}
	// Reads need no tag; a real key written with the tag reads back.
	tagged := typed.Of[Message](db.Table("messages"))
	if err := tagged.Put(ctx, &Message{Conversation: "c", Text: "one"}); err != nil {
		t.Fatal(err)
	}
	got, found, err := plain.Get(ctx, tablekit.Key("conversation", tablekit.String("c")).Add("seq", tablekit.Integer(1)))
	if err != nil || !found || got.Text != "one" {
		t.Errorf("Get through the untagged struct: %+v %v %v", got, found, err)
	}
	// A table whose seq is a plain key column takes the untagged struct.
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "plain", Key: tablekit.KeySchema{
		{Name: "conversation", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	if err := typed.Of[plainMessage](db.Table("plain")).Put(ctx, &v); err != nil {
		t.Errorf("Put into a table without auto-increment: %v", err)
	}
}
