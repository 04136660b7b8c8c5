// Package tsemu is for tests and tools that need Tablestore without the
// cloud: a Tablestore-wire-compatible server that stores its tables in any
// tablekit Backend the caller gives it (the Tablestore counterpart of
// Bigtable's bttest).
//
// A test starts a Server over a Backend and points the real Alibaba Cloud
// Tablestore SDK (or any HTTP client speaking Tablestore's protocol) at it:
//
//	backend := localengine.New() // or fileengine.Open, or any adapter
//	defer backend.Close()
//	srv, err := tsemu.NewServer(tsemu.Options{Backend: backend, Clock: clock})
//	...
//	defer srv.Close()
//	client := tablestore.NewClient(srv.Endpoint(), srv.InstanceName(), srv.AccessKeyID(), srv.AccessKeySecret())
//
// The package imports no engine: the Backend is the caller's, required,
// and never closed by the server. Over a Backend shared with other
// clients the server re-reads each table's metadata at every call.
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
// DeleteTable, AddDefinedColumn, DeleteDefinedColumn,
// ComputeSplitPointsBySize, CreateIndex, DropIndex, PutRow, GetRow,
// UpdateRow, DeleteRow, BatchGetRow, BatchWriteRow (also is_atomic),
// GetRange, and local transactions (StartLocalTransaction,
// CommitTransaction, AbortTransaction, transaction_id on GetRow, GetRange
// and the writes), with
// row-existence and column conditions, SingleColumnValueFilter,
// CompositeColumnValueFilter and ColumnPaginationFilter (with
// start_column/end_column, applied by the server to each row's columns in
// name order), INCREMENT with RT_AFTER_MODIFY, RT_PK,
// max_versions and time_range (including specific_time), TTL and the
// max-version-offset write window. GetRange pages at 5000 rows or 4 MB,
// returns next_start_primary_key, and answers in the block type
// data_block_type_hint asks for: PlainBuffer, or SimpleRowMatrix (see
// matrix.go; one value per cell, the newest selected version).
// ComputeSplitPointsBySize answers one split, the whole table (the
// emulator has one partition). CreateTable takes allow_update (false:
// UpdateRow is refused on the table, alone, in a batch or in a
// transaction; UpdateTable sets it again) and update_full_row (kept and
// reported: it serves search-index TTL and global tables, which the
// emulator has not, so UpdateRow changes the columns it names either
// way). UpdateTable refuses update_full_row, whatever its value, as the
// service does ("… must not contain updateFullRow").
//
// Where the real service answers differently from tablekit's SPEC, the
// emulator answers as the service does (the tablekit adapter bridges back):
// a read with columns_to_get that leaves a row without attribute cells
// answers the row as absent (with a time_range and no columns_to_get the
// row is found, with its key and no columns); BatchGetRow leaves row out for
// a missing row; BatchGetRow and BatchWriteRow fail the whole request for
// a missing table; a failed
// row-existence condition says "Row exists which is expected nonexistent" or
// "Row does not exist which is expected existent"; a conditional write
// consumes one read unit; filters may name primary-key columns (evaluated by
// the server on the key's values); DescribeTable reports table_id,
// creation_time, sse_details and stream_details.last_enable_time. Rows may
// carry zero padding after their checksum, as the Node.js SDK sends them.
//
// Atomic batches (BatchWriteRow with is_atomic; see atomic.go): the rows
// of one table and one partition key are applied all or nothing through
// the Backend's tablekit.AtomicWriter, one tablekit.Client.AtomicWrite,
// linearizably with the single-row operations. A row written more than
// once is applied in order (its writes are merged into one; a later write
// of a row with a condition or an increment is refused). When a row
// fails (its condition, its own invalid key or cells, a second table,
// another partition key), nothing is written and every row of the answer
// fails: the failing row with its error, the others with its code and a
// message beginning "Not applied: the atomic batch failed at row N of
// table 'T'". The call itself answers 200, as the Go SDK's test of a
// batch across partition keys expects; the real service's wording of a
// failed atomic batch is not recorded, so these messages are the
// emulator's. Refused as unsupported (400 OTSParameterInvalid, nothing
// written): is_atomic over a Backend without atomic writes
// (tablekit.CapabilitiesOf(backend).AtomicWrite false), over 100 rows
// (tablekit.MaxAtomicWrite), or on a table with secondary indexes.
//
// Local transactions (see transaction.go): StartLocalTransaction locks a
// partition key; writes to it without the transaction's id, and a second
// transaction on it, get 409 OTSRowOperationConflict, reads are not
// blocked (Read Committed). The transaction's writes are checked when they
// arrive (conditions see its own earlier writes), kept in the emulator,
// visible to its own reads only, and applied all or none at
// CommitTransaction with one tablekit.Client.AtomicWrite; AbortTransaction,
// or Options.TransactionTimeout (default 60 s, the service's) of idleness
// on the server's clock, discards them. Bounded: Options.MaxTransactions
// open transactions, MaxTransactionSize (4 MB) of writes and
// tablekit.MaxAtomicWrite rows per transaction. Refused on a table with an
// auto-increment key (as on the service) and over a Backend
// without atomic writes. The error codes are the service's documented
// ones; the HTTP statuses of OTSSessionNotExist (404), OTSSessionBusy (409),
// OTSDataOutOfRange and OTSOutOfTransactionDataSizeLimit (400) are not
// documented, so they are the emulator's. CreateTable's enable_local_txn
// is accepted and not modelled: every table has local transactions (the
// Node.js SDK cannot set it). Open transactions live in the server's
// memory: a restart aborts them, as a timeout does.
// Tablestore Stream (stream.go): stream_spec in CreateTable and
// UpdateTable, stream_details in DescribeTable, ListStream, DescribeStream,
// GetShardIterator and GetStreamRecord, served from the Backend's change
// feed (tablekit.ChangeFeeder; refused with OTSUnsupportOperation over a
// Backend without one), with the service's record format; GetShardIterator
// with a timestamp (µs) starts at the shard's first record committed at or
// after it. Not served: origin_record (the feed keeps no old values) and
// GetShardIterator with a token. Unlike the service, a GetStreamRecord at
// the end of a shard waits up to Options.StreamWait (100 ms) for the next
// record when the Backend is a tablekit.FeedWaiter (streamwait.go), so a
// follower sees a record about when it commits.
//
// Auto-increment primary-key columns (see autoinc.go): CreateTable takes
// the AUTO_INCREMENT option on one INTEGER key column other than the first,
// DescribeTable shows it, and a row to put or update (PutRow, UpdateRow,
// BatchWriteRow, atomic or not) passes the AUTO_INCREMENT placeholder as its
// value: the Backend assigns it (tablekit's SPEC §14: unique and increasing
// within the partition key, not consecutive) and RT_PK returns the key
// written. The values are the Backend's: the local and file engines count
// 1, 2, 3… per partition key, where the service's are large (time-like)
// numbers; a client must assume neither. As on the service, such a write takes no condition (a row
// existence other than IGNORE or a column condition is OTSParameterInvalid).
// The placeholder anywhere else is refused as a key of the wrong
// type (OTSInvalidPK). Over a Backend without
// tablekit.Capabilities.AutoIncrement, CreateTable of such a table is
// refused as unsupported.
//
// Secondary indexes, global and local (CreateTable index_metas,
// CreateIndex with include_base_data, DropIndex), are tables the server
// keeps in step with their base table on every write (see index.go);
// GetRow and GetRange read them, DescribeTable lists them, ListTable hides
// them, and writes to them are refused. Both update modes behave as
// synchronous, and index cells carry the time of the write as version.
//
// Checked against the real service: TestRecordedService replays 211 calls
// recorded against Tablestore (../shared/fidelity, read in place) and
// compares the answers field by field; all 211 match, a committed and an
// aborted local transaction included (the replay sends the recorded
// writes inside a transaction with the id the emulator answered, as the
// recorder kept them without it).
//
// TestRecordedServiceOverFile replays the same calls against
// tsemu/cmd/tablestore-emulator -backend file://DIR, with the same result.
//
// Checked against a second SDK: TestNodeSDK builds and starts
// tsemu/cmd/tablestore-emulator and runs the Node.js SDK's own test files (npm
// tablestore, pinned in package.json) and testdata/node/*.test.js (the
// table API, auto-increment keys) against it; the only failures allowed are
// the declared unsupported
// operations (search, parallel scan, SQL), listed by
// test title. TestNodeSDKOverBackends runs the probes against the emulator
// over file://DIR and over dynamodb:// on dynalite (auto-increment only
// where the backend has it).
//
// Checked against the Go SDK's own tests: TestGoSDK builds the official Go
// SDK's test package (its module's tablestore package, endpoint and keys set
// with -ldflags -X on its testConfig package) and runs its TableStoreSuite
// and Test_WriteAndReadOtsData against tsemu/cmd/tablestore-emulator, in memory and
// over file://DIR: 38 pass, 1 is skipped by the SDK itself, and the 3 that
// fail are listed with their reason (SQL, and
// creation_time, which the SDK only decodes with golang/protobuf < 1.4); a
// listed test that passes fails the check too. The suite's SetUpSuite loses
// its two search-index lines (see gosdk_test.go); the SDK's Search, global
// table and timeseries suites are not run.
//
// Semantics are tablekit's SPEC.md, executed by a tablekit.Client over the
// Backend with the server's Clock, so a tablekit.ManualClock drives TTL
// and the version window server-side.
//
// Time, as on the service, is the server's: it stamps cells written
// without a version, refuses versions outside the max-version-offset
// window around its now ("Invalid timestamp") and expires cells by TTL at
// its now. A tablekit client stamps versions with its own clock. For a
// ManualClock to govern a test against the emulator as it does on every
// other backend, the two must be one clock: in process, the same
// ManualClock in Options.Clock and tablekit.WithClock; out of process,
// `tablestore-emulator -clock manual -admin-addr ...` and an AdminClock
// (clock.go) given to the client, whose Set and Advance move the server's
// clock and then the client's to the same time. Against the real service
// no clock is shared: a ManualClock only stamps the versions the client
// writes (they must stay within the table's MaxVersionOffset of the
// service's time, one day by default) and TTL expires cells on the
// service's own time.
// Features tablekit does not model are refused with a 400
// OTSParameterInvalid that says so: regex value_trans_rule, a
// ColumnPaginationFilter inside a composite filter, a read's token. Search,
// SQL, timeseries and tunnel APIs answer
// OTSUnsupportOperation.
//
// Safe to expose (limits.go): a request is authenticated from its headers
// (credentials, signature, and x-ots-date within MaxDateSkew of the wall
// clock, with the service's "Mismatch between system time and x-ots-date"
// error) before its body is read; a wrong access key ID, instance name or
// signature all get the same "Signature mismatch." answer, so none can be
// confirmed alone, and request ids are random. The body is bounded by its
// declared length and MaxBodySize; past its first 64 KiB it holds room in
// Options.BodyMemory, reserved once those bytes have arrived. Answers hold
// room in Options.ResponseMemory and are encoded as they are written, so
// an answer's memory does not grow with its rows. Read, write and idle
// timeouts, and Options.StallTimeout for each piece of a body or an
// answer, cut off slow clients and clients that do not read;
// Options.MaxConns caps the open connections, answers to failed
// authentications carry no response signature, and filters are capped at
// MaxFilterWidth sub filters and MaxFilterConditions conditions.
//
// The data lives in the Backend: in memory with a localengine.Engine,
// durable with a fileengine.Engine, in a cloud store with an adapter. The
// per-table state tablekit does not model (reserved throughput, defined
// columns, creation time, secondary index definitions) lives in the
// server, and in Options.MetaFile when set; without it, a new server over
// the same Backend serves the same tables and rows but reports none of
// that state and treats index tables as ordinary tables.
//
// Test control (admin.go): SetClock and AdvanceClock move the server's
// clock (TTL and the version window follow it; a client that stamps its
// own versions must follow it too, see AdminClock), Reset deletes every table,
// SetFault makes a share of an operation's calls fail with OTSServerBusy,
// OTSQuotaExhausted, OTSTimeout or OTSServerUnavailable. AdminHandler
// serves the same over HTTP, behind a bearer token, on its own listener
// when Options.AdminAddr is set, for tests written in other languages:
// loopback only unless Options.AdminAllowRemote, a token of at least
// MinAdminTokenLen characters, wrong tokens throttled (429 past about 10 a
// second), at most 32 connections, and a clock that refuses to move past
// its range instead of wrapping around.
//
// Command tsemu/cmd/tablestore-emulator runs a Server as a standalone program for
// tests written in any language.
package tsemu
