// Package wire holds the byte layout of lengths and strings that every
// tablekit encoding shares: a length is an unsigned varint
// (encoding/binary's), and a string is its length then its bytes. The
// value encoding of backend/codec, the engines' stored rows (localengine's
// packed rows, fileengine's row values and change records) and the
// Client's resume token all write and size them with these functions, so
// the layout is written once. It imports nothing of tablekit's, so the
// root package can use it too (backend/codec imports the root).
package wire

import "encoding/binary"

// UvarintLen returns the length of binary.AppendUvarint's encoding of n
// (n >= 0).
func UvarintLen(n int) int {
	l := 1
	for u := uint64(n); u >= 0x80; u >>= 7 {
		l++
	}
	return l
}

// StringLen returns the length of AppendString's encoding of s.
func StringLen(s string) int { return UvarintLen(len(s)) + len(s) }

// AppendString appends s as its uvarint length and its bytes.
func AppendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// Uvarint decodes the uvarint at the start of s: the value and the number
// of bytes read, or k <= 0 when s holds no complete, in-range uvarint (as
// binary.Uvarint, over a string).
func Uvarint(s string) (x uint64, k int) {
	if len(s) > 0 && s[0] < 0x80 { // one byte: the common case, inlined
		return uint64(s[0]), 1
	}
	return uvarintLong(s)
}

func uvarintLong(s string) (x uint64, k int) {
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		b := s[i]
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				return 0, -(i + 1)
			}
			return x | uint64(b)<<shift, i + 1
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

// String decodes a string written by AppendString at the start of s: the
// string (a substring of s, not a copy) and the number of bytes it took,
// or k <= 0 when s does not hold one whole.
func String(s string) (str string, k int) {
	n, k := Uvarint(s)
	if k <= 0 || n > uint64(len(s)-k) {
		return "", 0
	}
	end := k + int(n)
	return s[k:end], end
}
