// Package tstest is a Tablestore-wire-compatible test server backed by
// tablekit's local engine: the Tablestore counterpart of Bigtable's bttest.
//
// A test starts a Server and points the real Alibaba Cloud Tablestore SDK
// (or any HTTP client speaking Tablestore's protocol) at it:
//
//	srv, err := tstest.NewServer(tstest.Options{Clock: clock})
//	...
//	defer srv.Close()
//	client := tablestore.NewClient(srv.Endpoint(), srv.InstanceName(), srv.AccessKeyID(), srv.AccessKeySecret())
//
// The protocol: every call is an HTTP POST to /{Operation} whose body is a
// proto2 message of the SDK's otsprotocol package; rows inside it are
// PlainBuffer, checked by their CRC-8 checksums. Requests must carry the
// x-ots-* headers and be signed (V2 HMAC-SHA1, or V4) with the server's
// access key pair; the body's MD5 must match x-ots-contentmd5. Responses
// carry x-ots-requestid, x-ots-contentmd5, x-ots-date, x-ots-contenttype
// and a response signature in authorization, as Tablestore's do; errors
// are a non-2xx status with an otsprotocol.Error body, with Tablestore's
// codes and, where they are documented, its messages.
//
// Operations: CreateTable, ListTable, DescribeTable, UpdateTable,
// DeleteTable, PutRow, GetRow, UpdateRow, DeleteRow, BatchGetRow,
// BatchWriteRow and GetRange, with row-existence and column conditions,
// SingleColumnValueFilter and CompositeColumnValueFilter, INCREMENT with
// RT_AFTER_MODIFY, RT_PK, max_versions and time_range (including
// specific_time), TTL and the max-version-offset write window. GetRange
// pages at 5000 rows or 4 MB and returns next_start_primary_key.
//
// Semantics are tablekit's SPEC.md, executed by a tablekit.Client over the
// Backend (by default a localengine.Engine) with the server's Clock, so a
// tablekit.ManualClock drives TTL and the version window server-side.
// Features tablekit does not model are refused with a 400
// OTSParameterInvalid that says so: auto-increment primary keys,
// ColumnPaginationFilter, regex value_trans_rule, start_column/end_column,
// secondary indexes, streams, local transactions, atomic batches,
// allow_update=false. Search, SQL, timeseries and tunnel APIs answer
// OTSUnsupportOperation.
//
// Command cmd/tablestore-emulator runs a Server as a standalone program for
// tests written in any language.
package tstest
