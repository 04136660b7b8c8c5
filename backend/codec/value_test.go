package codec

import (
	"bytes"
	"math"
	"testing"

	"github.com/tablekit/tablekit"
)

// The encoding is stored by two backends: these bytes must never change.
func TestAppendIsStable(t *testing.T) {
	for _, tc := range []struct {
		v    tablekit.Value
		want []byte
	}{
		{tablekit.String("ab"), []byte{1, 2, 'a', 'b'}},
		{tablekit.Integer(-2), []byte{2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}},
		{tablekit.Double(math.Copysign(0, -1)), []byte{3, 0x80, 0, 0, 0, 0, 0, 0, 0}},
		{tablekit.Boolean(true), []byte{4, 1}},
		{tablekit.Boolean(false), []byte{4, 0}},
		{tablekit.Binary([]byte{0, 0xff}), []byte{5, 2, 0, 0xff}},
		{tablekit.String(""), []byte{1, 0}},
	} {
		if got := AppendValue([]byte{9}, tc.v); !bytes.Equal(got, append([]byte{9}, tc.want...)) {
			t.Errorf("Append(%#v) = %x, want 09%x", tc.v, got, tc.want)
		}
	}
}
