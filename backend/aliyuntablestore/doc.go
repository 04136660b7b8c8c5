// Package aliyuntablestore is for programs that keep tablekit tables in
// Alibaba Cloud Tablestore (OTS): the tablekit backend over the official Go
// SDK github.com/aliyun/aliyun-tablestore-go-sdk v1.9.3 (package
// tablestore), which passes the whole conformance suite on tsemu, the
// Tablestore emulator beside it.
//
//	b, err := aliyuntablestore.Open(ctx, &aliyuntablestore.Options{
//		Endpoint: "https://myinstance.cn-hangzhou.ots.aliyuncs.com",
//		Instance: "myinstance",
//		// credentials from TABLESTORE_ACCESS_KEY_ID, TABLESTORE_ACCESS_KEY_SECRET
//		// and the optional TABLESTORE_SECURITY_TOKEN when left empty
//	})
//	...
//	db := tablekit.NewClient(b)
//
// What it costs against the raw SDK doing the same work, and how that was
// measured, is in BENCHMARKS.md beside this file.
//
// # Opening
//
// [Open] opens a backend as tablestore.NewClientWithConfig opens a client;
// [New] wraps a *tablestore.TableStoreClient you already have (and refuses
// any [Options] field, all of which configure a client Open builds, rather
// than ignore it).
//
// Importing the package registers the tablestore:// URL scheme ([Scheme]):
// tablekit.Open(ctx, "tablestore://myinstance?region=cn-hangzhou") opens
// the same backend, with the credentials taken only from the environment
// variables TABLESTORE_ACCESS_KEY_ID, TABLESTORE_ACCESS_KEY_SECRET and
// TABLESTORE_SECURITY_TOKEN (optional), never from the URL.
//
// # Native access
//
// The native client stays reachable for what tablekit does not cover
// (secondary indexes, search), through the tablekit.Client:
//
//	var c *tablestore.TableStoreClient
//	if db.As(&c) {
//		// c is the backend's SDK client ([Backend.Client])
//	}
//
// A table written through tablekit is an ordinary Tablestore table that
// any other Tablestore client or tool can read (see Storage layout).
//
// # Storage layout
//
// tablekit's model is Tablestore's, so the mapping is one to one and a
// table written through tablekit is an ordinary Tablestore table that any
// other Tablestore client can read (there is no layout of tablekit's own):
//
//   - A table is a Tablestore table of the same name; its key columns are
//     its primary-key columns (String, Integer, Binary as STRING, INTEGER,
//     BINARY); TTL, MaxVersions and MaxVersionOffset are time_to_live,
//     max_versions and deviation_cell_version_in_sec.
//   - A cell is a Tablestore cell; its version is the cell's timestamp.
//     A put is PutRow with every timestamp given; an update is UpdateRow
//     (Put with a timestamp, DELETE_ONE_VERSION, DELETE_ALL_VERSION,
//     INCREMENT with RT_AFTER_MODIFY to return the new values); a delete
//     is DeleteRow.
//   - Tablestore keeps each table's schema and options and applies the
//     options (TTL, MaxVersions, the version window) itself, so the
//     adapter keeps no Incarnation or Generation: DescribeTable reports
//     an empty Incarnation and Generation 0, CreateTable does not store
//     them, and UpdateTable ignores both in its request. Tablestore has
//     no conditional UpdateTable, so the adapter checks that the options
//     are still those the Client read just before it changes them, under
//     a lock per table shared by the Backends of the process: concurrent
//     changes of different options by clients of one process all stick;
//     across processes a narrow race remains in which one change
//     overwrites another. A table deleted and created again
//     with another key schema is still noticed: the service answers
//     OTSInvalidPK to a row call built from the old schema, which the
//     adapter reports as an error matching driver.ErrStaleMeta (as well
//     as ErrInvalidPrimaryKey), so the tablekit.Client reads the table
//     again and validates the call against the new schema.
//
// # Semantics
//
// Conditions, filters, ranges and batches map one to one:
//
//   - Conditions are a row-existence expectation plus a column condition;
//     filters are SingleColumnValueFilter (PassIfMissing = !filter_if_missing,
//     LatestVersionOnly = latest_version_only) and
//     CompositeColumnValueFilter (AND, OR, NOT).
//   - GetRange is GetRange in either direction, InfMin/InfMax as
//     INF_MIN/INF_MAX, Limit as limit, GetRangeResponse.Next as
//     next_start_primary_key. BatchGetRow and BatchWriteRow are the
//     calls of the same names, their per-table answers mapped back to the
//     request's order.
//
// Contexts. The SDK takes no context.Context. The adapter gives every call
// a unique trace ID (the SDK's ExtraRequestInfo, sent as the
// x-ots-sdk-traceid header) and installs its own http.RoundTripper
// ([ContextTransport]) in the SDK, which sends the HTTP request of that
// call with the caller's context: when the context ends, net/http aborts
// the request in flight, and the error the transport then returns is one
// the SDK does not retry. The SDK's own retries sleep with time.Sleep,
// which nothing can wake, so for the clients it builds ([Open]) the
// adapter sets the SDK's RetryTimes to 0 and runs the SDK's retry policy itself — the same codes (the SDK's exported
// ShouldRetryViaErrorAndAction), the same transport-error rules, the same
// back-off intervals (run by driver.Backoff and driver.Sleep), within the
// configured RetryTimes and MaxRetryTime, the client's
// RetryNotify called before each retry — with back-off sleeps that end
// with the context. Calls run on the caller's goroutine and return
// ctx.Err() as soon as the context ends, leaving nothing running. Batches
// keep the SDK's partial retry: rows that failed with a retryable code
// (busy, throttled: not applied) are sent again, alone, within the same
// attempt budget.
//
// A client given to [New] keeps its own retries; there, and for
// ListTable (whose SDK call takes no per-call settings, so its request
// cannot be tied to the context), a call whose context can end runs on a
// goroutine of its own and returns ctx.Err() at once; the goroutine ends
// when the SDK returns, at the latest after its current back-off sleep (its
// next attempt fails at once in the transport), and a ListTable request
// runs to its end.
//
// A write whose context ends while it is in flight may or may not have
// been applied: the request may already have reached the server, which
// does not learn that the caller gave up. The adapter then returns
// ctx.Err() and sends no further attempt; read the row to learn the
// outcome. A context that is already done when the call starts sends
// nothing.
//
// Retries. There is one retry layer, never two: the adapter's for its own
// clients, the SDK's for clients given to New. [DefaultConfig] lowers the
// SDK's 10 attempts within 5 s to [DefaultRetryTimes] retries within
// [DefaultMaxRetryTime]; the caller's context bounds them further. The
// SDK's policy resends a request at once when the connection fails (EOF,
// reset), which could apply a write twice; the transport stops that for
// writes that are not idempotent (an increment, or any write with a
// condition), which then fail with ErrUnavailable. Puts and deletes carry
// resolved versions, so resending them is harmless.
//
// Exact reads. Tablestore evaluates a filter only on the columns it
// returns, while tablekit evaluates it on every selected cell before the
// projection: the adapter adds the filter's columns to columns_to_get,
// evaluates the filter with rowmodel.MatchFilter and strips them again.
// Tablestore returns no row when the projection selects nothing in it
// (with a time range alone it returns the row with no columns, the Go
// SDK's own tests say; the adapter does not rely on that); tablekit
// returns every row that exists. So a GetRow or
// BatchGetRow that finds nothing under a projection or time range reads
// the whole row once more and answers from that second read alone (one
// atomic snapshot); a GetRange with a projection reads every column, and
// one with a time range every visible version, and selects locally. A
// range filter is also sent to the server, to save transfer, and checked
// again on every returned row.
//
// Batches. A write batch is one BatchWriteRow call: the tablekit.Client
// never puts two writes of one row in one backend call. A read batch that
// holds the same row twice, or one table under several selections, is
// sent as several BatchGetRow calls (Tablestore refuses repeated rows), a
// few at a time (driver.Parallel). When
// the server refuses a whole batch with a definite client error (a missing
// table, an invalid key or argument: nothing was applied), the adapter
// sends it again split by table, then by row, so that each row gets its
// own error, as SPEC §8 wants.
//
// Atomic writes (SPEC §13). The adapter is a tablekit.AtomicWriter and
// declares Capabilities.AtomicWrite: a Client.AtomicWrite is one
// BatchWriteRow with IsAtomic=true (Tablestore applies the rows of one
// table and one partition key all or nothing; the Client has checked
// that they are). A failed write fails every row of the answer; the
// adapter reports the failing row's error as a *tablekit.AtomicWriteError
// with its index: the first failed row whose message is not tsemu's
// "Not applied: the atomic batch failed at row N" of a row that did not
// fail itself. If a server words every failed row alike, that is the
// first row, which may name the wrong write (the real service's wording
// of a failed atomic batch is not recorded in ../shared/fidelity). An
// atomic write with a condition or an increment is not sent again after
// an attempt whose outcome is unknown (ErrUnavailable). A tsemu server
// whose Backend has no atomic writes refuses is_atomic with
// OTSParameterInvalid, which the adapter reports as ErrInvalidArgument.
// Local transactions are not used.
//
// The SDK panics on some inputs (values of unknown Go types, a nil
// condition): the adapter builds every SDK request from validated
// tablekit values and always sets a condition, and turns any panic inside
// the SDK (on a malformed server answer, say) into ErrUnavailable.
//
// # Limits
//
// What it cannot do, or does differently from the other backends:
//
//   - Time is the server's. Tablestore checks the version window and TTL
//     and timestamps increments with its own clock, not with the tablekit
//     client's (the request's Now); with the real service, keep the
//     client's clock in sync (a tsemu server reads the clock you give it
//     in Options.Clock; tsemu/cmd/tablestore-emulator -clock manual follows a
//     tsemu.AdminClock), and a ManualClock does not govern TTL there.
//     A version of 0 in PutRow is sent as "no timestamp" by the SDK, which
//     means the server's now.
//   - TTL and MaxVersions above 2^31-1 do not fit Tablestore's 32-bit
//     fields and are refused with ErrInvalidArgument.
//   - Column conditions of writes are evaluated by Tablestore (they must
//     be, to be atomic), so their exact semantics are the server's; the
//     conformance suite checks them against tsemu, not the real service.
//     For the same reason a write condition larger than the service
//     accepts (more than 32 column conditions, or more than 32 filters in
//     one AND/OR) is refused with ErrInvalidArgument before anything is
//     sent; other backends accept it. A read filter of any size works: one
//     beyond the service's bound is evaluated by the adapter alone (the
//     service then returns every row of the range, so such a read costs a
//     full scan of its range).
//   - Auto-increment key columns (SPEC §14; Capabilities.AutoIncrement)
//     are Tablestore's AUTO_INCREMENT, the assigned key read back with
//     RT_PK. The SDK's UpdateRow returns no key, so an update whose key
//     holds tablekit.AutoIncrement is a one-row BatchWriteRow, and one that
//     also increments is sent as the put of the row it creates (a change
//     feed records it as a put). Such a write is never sent twice.
//     Tablestore takes no condition on it: the adapter evaluates the
//     condition against the absent row and sends the write without it.
//   - The change feed (SPEC §15) is Tablestore Stream (see feed.go): a
//     shard is "STREAM/SHARD", a checkpoint "K:ITERATOR" (K records read
//     after a shard iterator, which is a position the service keeps
//     valid while its records are retained). Its retention is the
//     stream's expiration_time. Checked on tsemu only: how the real
//     service answers an UpdateTable that enables an enabled stream (to
//     change its expiration) is not known.
//   - A client built elsewhere and given to [New] honours contexts
//     (the call returns at once) but its HTTP requests are aborted only if
//     its TableStoreConfig.Transport is a [ContextTransport].
//   - If a server returns a column incremented several times in one
//     UpdateRow only once, the earlier increments' values are derived from
//     the final one; when the increment is followed by another change of
//     the same column this is impossible and the call reports
//     ErrUnavailable although the write was applied. tsemu returns one
//     cell per increment and is not affected.
//
// # Errors
//
// Errors are *tablekit.Error whose Err is the SDK's *tablestore.OtsError
// (reach it with errors.As), as SPEC §12 says: OTSParameterInvalid
// and the size limits (OTSRequestBodyTooLarge, OTSOutOfRowSizeLimit,
// OTSOutOfColumnCountLimit) → ErrInvalidArgument, OTSInvalidPK →
// ErrInvalidPrimaryKey, OTSConditionCheckFail → ErrConditionFailed,
// OTSObjectNotExist → ErrTableNotFound, OTSObjectAlreadyExist →
// ErrAlreadyExists, OTSAuthFailed, OTSNoPermissionAccess and
// OTSPermissionDenied (and any other 401 or 403 answer) →
// ErrPermissionDenied, load shedding (OTSServerBusy,
// OTSStorageServerBusy, capacity, quota and row contention codes) →
// ErrThrottled, transient failures (OTSTimeout, OTSServerUnavailable,
// OTSPartitionUnavailable, OTSTableNotReady, OTSInternalServerError,
// network errors) → ErrUnavailable, unsupported operations →
// ErrUnimplemented. Only ErrThrottled and ErrUnavailable say a retry
// may succeed. Per-row errors of batches carry a *tablestore.OtsError
// built from the row's code and message.
package aliyuntablestore
