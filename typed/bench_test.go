package typed_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/benchstat"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/typed"
)

// Ten fields: two key columns and eight attributes of mixed types. The
// dynamodbav tags let BenchmarkVsAttributeValue map the same struct with
// the AWS SDK's attributevalue package.
type bench10 struct {
	ID    string    `tablekit:"id,key" dynamodbav:"id"`
	Seq   int64     `tablekit:"seq,key" dynamodbav:"seq"`
	Name  string    `tablekit:"name" dynamodbav:"name"`
	Kind  string    `tablekit:"kind" dynamodbav:"kind"`
	Count int32     `tablekit:"count" dynamodbav:"count"`
	Size  uint32    `tablekit:"size" dynamodbav:"size"`
	Score float64   `tablekit:"score" dynamodbav:"score"`
	OK    bool      `tablekit:"ok" dynamodbav:"ok"`
	Data  []byte    `tablekit:"data" dynamodbav:"data"`
	At    time.Time `tablekit:"at" dynamodbav:"at,unixtime"`
}

var benchValue = bench10{ID: "user-42", Seq: 7, Name: "click", Kind: "ui", Count: 3, Size: 1024, Score: 0.75, OK: true,
	Data: []byte("0123456789abcdef"), At: time.UnixMilli(1700000000000)}

func benchTable(b *testing.B) *tablekit.Table {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	b.Cleanup(func() { db.Close() })
	schema := tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "b", Key: schema}); err != nil {
		b.Fatal(err)
	}
	return db.Table("b")
}

// handPut builds the key and columns by hand, as code without mapping does.
func handPut(ctx context.Context, tbl *tablekit.Table, v *bench10) error {
	key := tablekit.Key("id", tablekit.String(v.ID)).Add("seq", tablekit.Integer(v.Seq))
	return tbl.PutRow(ctx, key, []tablekit.Column{
		{Name: "name", Value: tablekit.String(v.Name)},
		{Name: "kind", Value: tablekit.String(v.Kind)},
		{Name: "count", Value: tablekit.Integer(int64(v.Count))},
		{Name: "size", Value: tablekit.Integer(int64(v.Size))},
		{Name: "score", Value: tablekit.Double(v.Score)},
		{Name: "ok", Value: tablekit.Boolean(v.OK)},
		{Name: "data", Value: tablekit.Binary(v.Data)},
		{Name: "at", Value: tablekit.Integer(v.At.UnixMilli())},
	})
}

func handGet(ctx context.Context, tbl *tablekit.Table, key tablekit.PrimaryKey) (bench10, error) {
	row, _, err := tbl.GetRow(ctx, key)
	var v bench10
	if err != nil {
		return v, err
	}
	v.ID, _ = row.Key[0].Value.Str()
	v.Seq, _ = row.Key[1].Value.Int()
	for _, c := range row.Columns {
		switch c.Name {
		case "name":
			v.Name, _ = c.Value.Str()
		case "kind":
			v.Kind, _ = c.Value.Str()
		case "count":
			i, _ := c.Value.Int()
			v.Count = int32(i)
		case "size":
			i, _ := c.Value.Int()
			v.Size = uint32(i)
		case "score":
			v.Score, _ = c.Value.Float()
		case "ok":
			v.OK, _ = c.Value.Bool()
		case "data":
			v.Data, _ = c.Value.Bytes()
		case "at":
			i, _ := c.Value.Int()
			v.At = time.UnixMilli(i)
		}
	}
	return v, nil
}

func BenchmarkPutRow(b *testing.B) {
	ctx := context.Background()
	b.Run("hand", func(b *testing.B) {
		tbl := benchTable(b)
		v := benchValue
		b.ReportAllocs()
		for b.Loop() {
			if err := handPut(ctx, tbl, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("typed", func(b *testing.B) {
		t := typed.Of[bench10](benchTable(b))
		v := benchValue
		b.ReportAllocs()
		for b.Loop() {
			if err := t.Put(ctx, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkGetRow(b *testing.B) {
	ctx := context.Background()
	key := tablekit.Key("id", tablekit.String(benchValue.ID)).Add("seq", tablekit.Integer(benchValue.Seq))
	b.Run("hand", func(b *testing.B) {
		tbl := benchTable(b)
		v := benchValue
		if err := handPut(ctx, tbl, &v); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if got, err := handGet(ctx, tbl, key); err != nil || got.Name != "click" {
				b.Fatal(got, err)
			}
		}
	})
	b.Run("typed", func(b *testing.B) {
		tbl := benchTable(b)
		t := typed.Of[bench10](tbl)
		v := benchValue
		if err := t.Put(ctx, &v); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if got, _, err := t.Get(ctx, key); err != nil || got.Name != "click" {
				b.Fatal(got, err)
			}
		}
	})
}

// BenchmarkMarshal and BenchmarkUnmarshal time the mapping alone.
func BenchmarkMarshal(b *testing.B) {
	v := benchValue
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := typed.Marshal(&v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	key, cols, err := typed.Marshal(&benchValue)
	if err != nil {
		b.Fatal(err)
	}
	row := tablekit.Row{Key: key, Columns: cols}
	b.ReportAllocs()
	for b.Loop() {
		var v bench10
		if err := typed.Unmarshal(row, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetRowInterleaved makes one hand-built and one typed GetRow
// per iteration, alternating which goes first, and reports the median of
// each and their ratio: on a shared machine the ratio then compares calls
// made under the same load.
//
//	go test -run '^$' -bench GetRowInterleaved -count 6 -benchtime 50000x ./typed/
func BenchmarkGetRowInterleaved(b *testing.B) {
	ctx := context.Background()
	tbl := benchTable(b)
	t := typed.Of[bench10](tbl)
	v := benchValue
	if err := t.Put(ctx, &v); err != nil {
		b.Fatal(err)
	}
	key := tablekit.Key("id", tablekit.String(benchValue.ID)).Add("seq", tablekit.Integer(benchValue.Seq))
	calls := [2]func() error{
		func() error {
			got, err := handGet(ctx, tbl, key)
			if err == nil && got.Name != "click" {
				err = fmt.Errorf("hand: %+v", got)
			}
			return err
		},
		func() error {
			got, _, err := t.Get(ctx, key)
			if err == nil && got.Name != "click" {
				err = fmt.Errorf("typed: %+v", got)
			}
			return err
		},
	}
	var d [2][]time.Duration
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			c := (i + k) % 2
			t0 := time.Now()
			if err := calls[c](); err != nil {
				b.Fatal(err)
			}
			d[c] = append(d[c], time.Since(t0))
		}
	}
	hand, typ := benchstat.Median(d[0]), benchstat.Median(d[1])
	b.ReportMetric(float64(hand.Nanoseconds()), "hand-p50-ns")
	b.ReportMetric(float64(typ.Nanoseconds()), "typed-p50-ns")
	b.ReportMetric(float64(typ)/float64(hand), "ratio")
}
