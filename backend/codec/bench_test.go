package codec

import (
	"math"
	"testing"

	"github.com/tablekit/tablekit"
)

var (
	benchSchema = tablekit.KeySchema{{Name: "user", Type: tablekit.TypeString}, {Name: "ts", Type: tablekit.TypeInteger}, {Name: "b", Type: tablekit.TypeBinary}}
	benchKey    = tablekit.Key("user", tablekit.String("user0000012345")).Add("ts", tablekit.Integer(-1700000000000)).Add("b", tablekit.Binary([]byte{0, 1, 2, 3}))
	benchSink   int
)

func BenchmarkAppendKey(b *testing.B) {
	var buf [128]byte
	for b.Loop() {
		benchSink += len(AppendKey(buf[:0], benchKey))
	}
}

func BenchmarkEncodeKey(b *testing.B) {
	for b.Loop() {
		benchSink += len(EncodeKey(benchKey))
	}
}

func BenchmarkAppendDecodeKey(b *testing.B) {
	enc := EncodeKey(benchKey)
	dst := make(tablekit.PrimaryKey, 0, 3)
	buf := make([]byte, 0, len(enc))
	for b.Loop() {
		k, _, err := AppendDecodeKey(dst[:0], buf[:0], benchSchema, enc)
		if err != nil {
			b.Fatal(err)
		}
		benchSink += len(k)
	}
}

func BenchmarkAppendValue(b *testing.B) {
	var buf [128]byte
	vals := []tablekit.Value{tablekit.String("hello, world"), tablekit.Integer(42), tablekit.Double(math.Pi), tablekit.Boolean(true), tablekit.Binary(make([]byte, 64))}
	for b.Loop() {
		dst := buf[:0]
		for _, v := range vals {
			dst = AppendValue(dst, v)
		}
		benchSink += len(dst)
	}
}

func BenchmarkDecodeValue(b *testing.B) {
	var enc []byte
	for _, v := range []tablekit.Value{tablekit.String("hello, world"), tablekit.Integer(42), tablekit.Double(math.Pi), tablekit.Boolean(true), tablekit.Binary(make([]byte, 64))} {
		enc = AppendValue(enc, v)
	}
	s := string(enc)
	for b.Loop() {
		for rest := s; len(rest) > 0; {
			_, n, err := DecodeValue(rest)
			if err != nil {
				b.Fatal(err)
			}
			rest = rest[n:]
		}
	}
}
