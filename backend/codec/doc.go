// Package codec is for authors of tablekit backends, the built-in ones and
// third-party ones alike: it holds the two byte encodings tablekit's stores
// share, of primary keys and of values, each with its one encoder and its
// one decoder, so that a new backend stores keys and cells the way the
// others do instead of inventing its own. Programs that only use tables
// never need it.
//
// # Keys
//
// [AppendKey], [EncodeKey], [EncodeKeyString], [KeySize], [DecodeKey],
// [AppendDecodeKey], [Bound], [AppendBound] and [PrefixSuccessor] encode a
// primary key into bytes for a store that keeps its rows ordered by a byte
// string: the local engine's ordered map, the file engine's pebble keys,
// Bigtable row keys, DynamoDB sort keys, the Tablestore emulator.
//
// Each column encodes by its schema type, self-delimiting, and the
// columns are concatenated in schema order (the column names are not
// stored: decoding needs the [tablekit.KeySchema]):
//
//   - String and Binary: the bytes, with 0x00 written as 0x00 0xFF, then the
//     terminator 0x00 0x01. "a" → 61 00 01; "" → 00 01; "a\x00" → 61 00 FF 00 01.
//     The terminator sorts below every escaped or literal byte that could
//     follow, so a proper prefix sorts before its extensions.
//   - Integer: 20 ASCII bytes: '=' and the 19-digit zero-padded value for
//     i ≥ 0; '-' and the 19-digit zero-padded i + 2^63 for i < 0 ('-' <
//     '='), e.g. 42 → "=0000000000000000042", -1 → "-9223372036854775807".
//
// The invariants a backend may rely on (the tests check them, by fuzzing
// too):
//
//   - Order: for keys a and b of one schema, bytes.Compare(EncodeKey(a),
//     EncodeKey(b)) has the sign of [tablekit.CompareKeys](a, b), SPEC §4's
//     key order. A store that sorts its keys as bytes therefore returns
//     ranges in SPEC order, forward and backward.
//   - Round trip: DecodeKey(schema, EncodeKey(k)) equals k, and bytes that
//     decode re-encode to themselves (one encoding per key).
//   - Prefixes: the encoding of the first n columns of a key is a prefix of
//     the key's encoding, so "every key whose first columns are these" is a
//     byte prefix; [Bound] turns a range bound holding InfMin or InfMax into
//     the byte bound that holds exactly the keys SPEC orders inside it.
//   - Readability: a String column is its own bytes (unless it holds 0x00),
//     and an Integer column is decimal text, so an operator can read keys
//     with a store's own tools (cbt, the AWS console).
//
// InfMin and InfMax appear only in range bounds, never in an encoded key.
//
// # Values
//
// [AppendValue] and [DecodeValue] encode one [tablekit.Value]: one type
// byte (its [tablekit.Type]: 1 String, 2 Integer, 3 Double, 4 Boolean,
// 5 Binary) followed by its payload: Integer and Double 8 bytes big endian
// (Double as its IEEE 754 bits, so -0 and every NaN payload survive),
// Boolean one byte (0 or 1), String and Binary a uvarint length then the
// bytes. A value is self-delimiting: a backend writes cells as it likes (a
// version, a name) around values and decodes them in sequence. The file
// engine's rows, the DynamoDB adapter's binary cells and the CLI's row
// checksums use it.
//
// # Stability
//
// Both formats are stored on disk (the file engine) and in cloud tables
// (Bigtable row keys, DynamoDB items): they never change. A new encoding
// would be a new function, and the bytes the tests pin stay as they are.
package codec
