package codec_test

import (
	"bytes"
	"fmt"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
)

// A backend that keeps rows in a byte-ordered store encodes the key to
// get the store's key, and a cell's value to get the bytes it stores.
func Example() {
	schema := tablekit.KeySchema{{Name: "user", Type: tablekit.TypeString}, {Name: "ts", Type: tablekit.TypeInteger}}
	early := tablekit.Key("user", tablekit.String("u7")).Add("ts", tablekit.Integer(-5))
	late := tablekit.Key("user", tablekit.String("u7")).Add("ts", tablekit.Integer(42))

	a, b := codec.EncodeKey(early), codec.EncodeKey(late)
	fmt.Printf("%q\n", b)
	fmt.Println("bytes order = key order:", bytes.Compare(a, b) == tablekit.CompareKeys(early, late))

	k, err := codec.DecodeKey(schema, b)
	fmt.Println(k.Equal(late), err)

	// Values are self-delimiting: two in a row decode one after the other.
	cell := codec.AppendValue(nil, tablekit.String("hello"))
	cell = codec.AppendValue(cell, tablekit.Integer(7))
	rest := string(cell)
	for len(rest) > 0 {
		v, n, err := codec.DecodeValue(rest)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(v.Type(), v)
		rest = rest[n:]
	}
	// Output:
	// "u7\x00\x01=0000000000000000042"
	// bytes order = key order: true
	// true <nil>
	// String hello
	// Integer 7
}
