package tablekit

import "testing"

// An index key survives encoding, cutting into entry pieces and decoding,
// escaped zero bytes, long values and negative numbers included; bytes
// that are not an encoding decode to nothing.
func TestIndexKeyRoundTrip(t *testing.T) {
	ks := KeySchema{{Name: "s", Type: TypeString}, {Name: "n", Type: TypeInteger}, {Name: "b", Type: TypeBinary}}
	long := string(make([]byte, 1500)) // all zero bytes: every one escaped, over two pieces
	for _, k := range []PrimaryKey{
		Key("s", String("abc")).Add("n", Integer(-5)).Add("b", BinaryString("x")),
		Key("s", String("")).Add("n", Integer(0)).Add("b", BinaryString("")),
		Key("s", String("a\x00b\x01")).Add("n", Integer(1<<62)).Add("b", BinaryString("\x00\xff\x00")),
		Key("s", String("z")).Add("n", Integer(-1<<63)).Add("b", BinaryString(long)),
	} {
		var b []byte
		for _, p := range k {
			b = appendIndexValue(b, p.Value)
		}
		got, ok := decodeIndexKey(ks, entryBytes(entryChunks(b)))
		if !ok || CompareKeys(got, k) != 0 {
			t.Errorf("decode(encode(%v)) = %v, %v", k, got, ok)
		}
	}
	for _, bad := range []string{"", "abc", "abc\x00", "abc\x00\x02", "abc\x00\x01short", "abc\x00\x01" + "\x80\x00\x00\x00\x00\x00\x00\x00" + "x\x00\x01trailing"} {
		if got, ok := decodeIndexKey(ks, bad); ok {
			t.Errorf("decode(%q) = %v, want no key", bad, got)
		}
	}
}
