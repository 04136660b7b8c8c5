package plainbuffer

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecodeRows: decoding never panics, fails only with a *DecodeError
// wrapping ErrMalformed, and whatever decodes re-encodes to bytes that
// decode to the same rows.
func FuzzDecodeRows(f *testing.F) {
	for _, s := range sdkSamples() {
		f.Add(s.b)
	}
	f.Add(sampleBlock())
	f.Add(EncodeRows(readerRows()))
	f.Add([]byte{0x75, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := DecodeRows(b)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, ErrMalformed) || de.Offset < 0 || de.Offset > len(b) || de.Msg == "" {
				t.Fatalf("bad error %#v", err)
			}
			return
		}
		enc := EncodeRows(rows)
		// The encoding is canonical; the only thing the decoder accepts and
		// the encoder drops is an empty TAG_ROW_DATA section (one byte).
		if len(enc) > len(b) {
			t.Fatalf("re-encoding grew from %d to %d bytes", len(b), len(enc))
		}
		again, err := DecodeRows(enc)
		if err != nil {
			t.Fatalf("re-encoded rows do not decode: %v\n%x", err, enc)
		}
		if !sameRows(again, rows) {
			t.Fatalf("rows changed:\n got %s\nwant %s", fmtRows(again), fmtRows(rows))
		}
		if !bytes.Equal(EncodeRows(again), enc) {
			t.Fatalf("encoding is not stable")
		}
		if len(rows) == 1 {
			if _, err := DecodeRow(b); err != nil {
				t.Fatalf("DecodeRow: %v", err)
			}
		}
	})
}

// FuzzDecodeValueNoLengthPrefix: same properties for single values.
func FuzzDecodeValueNoLengthPrefix(f *testing.F) {
	for _, v := range sampleValues() {
		if v != nil {
			f.Add(EncodeValueNoLengthPrefix(*v))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeValueNoLengthPrefix(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("bad error %#v", err)
			}
			return
		}
		if enc := EncodeValueNoLengthPrefix(v); !bytes.Equal(enc, b) {
			t.Fatalf("value %v re-encodes to %x, input %x", v, enc, b)
		}
	})
}

// FuzzDecodeRowsIgnoringChecksums explores the structure past the
// checksums, which random mutation rarely gets right: whatever decodes
// without checksum checks re-encodes (with correct checksums) to bytes that
// decode strictly to the same rows.
func FuzzDecodeRowsIgnoringChecksums(f *testing.F) {
	for _, s := range sdkSamples() {
		f.Add(s.b)
	}
	f.Add(sampleBlock())
	f.Add(EncodeRows(readerRows()))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := decodeRows(b, false)
		if err != nil {
			if !errors.Is(err, ErrMalformed) || errors.Is(err, ErrChecksumMismatch) {
				t.Fatalf("bad error %#v", err)
			}
			return
		}
		enc := EncodeRows(rows)
		again, err := DecodeRows(enc)
		if err != nil {
			t.Fatalf("re-encoded rows do not decode: %v\n%x", err, enc)
		}
		if !sameRows(again, rows) {
			t.Fatalf("rows changed:\n got %s\nwant %s", fmtRows(again), fmtRows(rows))
		}
		// With checksums on, the input decodes to the same rows or fails
		// only on a checksum.
		strict, err := DecodeRows(b)
		if err != nil && !errors.Is(err, ErrChecksumMismatch) {
			t.Fatalf("strict decode failed differently: %v", err)
		}
		if err == nil && !sameRows(strict, rows) {
			t.Fatalf("strict decode differs")
		}
	})
}
