// Package gcpbigtable is for programs that keep tablekit tables in Google
// Cloud Bigtable: the tablekit backend for cloud.google.com/go/bigtable,
// which passes the whole conformance suite on bttest. Open it from a
// project and instance, or wrap clients you already have with New, and
// hand it to tablekit.NewClient:
//
//	b, err := gcpbigtable.Open(ctx, &gcpbigtable.Options{Project: "my-project", Instance: "my-instance", AppProfile: "batch"})
//	db := tablekit.NewClient(b)
//
// What it costs against the raw Bigtable client doing the same work, and
// how that was measured, is in BENCHMARKS.md beside this file.
//
// # Opening
//
// [New] (existing clients) refuses the Options fields that only configure
// the clients Open builds, so a setting is never silently ignored.
//
// Importing the package registers the bigtable:// URL scheme ([Scheme]),
// so that tablekit.Open(ctx, "bigtable://my-project/my-instance?app_profile=batch")
// opens the same backend; BIGTABLE_EMULATOR_HOST is honoured there too.
//
// With BIGTABLE_EMULATOR_HOST set, [Open] talks to that emulator as the
// Bigtable client would, but dials the connections itself with the
// client's 256 MiB message limits, so rows over 4 MiB read as they do
// with an explicit endpoint. (The Bigtable client still dials, and never
// uses or closes, its own connection for the variable: two idle
// connections per Open; with an explicit endpoint there are none.) Open
// waits for the emulator to accept a connection: when nothing listens
// there it fails with ErrUnavailable at once (connection refused), and
// within [EmulatorConnectTimeout] (10 s) when nothing answers at all,
// where the Bigtable client would retry the first call for ever. Against
// the service (or an endpoint in Options.ClientOptions), the Bigtable
// client dials when Open builds it and Open fails with ErrUnavailable
// after its three attempts: at once when the connection is refused, in
// about 4 s when the host does not resolve.
//
// # Native access
//
// tablekit.Client.As offers the native clients: a **bigtable.Client
// target gets the data client, a **bigtable.AdminClient the admin client
// (when there is one). [Backend.Client], [Backend.AdminClient] and
// [Backend.Table] give them too. Every table is readable with cbt: the
// storage layout below says what each row holds.
//
// # Storage layout
//
// A tablekit table is one Bigtable table, created with two column families,
// plus one row in a shared metadata table. Everything is readable with cbt.
//
// Table id: the portable name, '.', and the table's incarnation (16 hex
// digits the Client makes at CreateTable), so a table deleted and created
// again is another Bigtable table: a client still holding the old
// metadata addresses a table that no longer exists, gets ErrTableNotFound,
// and the Client reads the metadata again and retries (SPEC §3). A name
// longer than 33 characters is cut to its first 16, '-', and 16 hex digits
// of the SHA-256 of the whole name, so the id stays within Bigtable's 50
// characters ([TableID]). A table made before incarnations has none and
// keeps its old id: the name, or past 50 characters its first 33, '-' and
// the 16 hex digits. Portable names never contain '-' or '.', so no two
// forms collide; ListTables and DescribeTable report the portable name,
// read from the metadata row.
//
// Row key: the primary key encoded by backend/codec (EncodeKey), whose byte order
// is SPEC §4's key order, so Bigtable's own ordering serves GetRange in
// both directions. Columns are concatenated in schema order: a String or
// Binary is its bytes with 0x00 escaped as 00 FF, then the terminator
// 00 01; an Integer is 20 ASCII characters, '=' and 19 zero-padded digits
// for n ≥ 0, '-' and the 19 digits of n + 2^63 for n < 0. So the key
// (customer="c42", ts=7) is the row key
//
//	c42\x00\x01=0000000000000000007
//
// and `cbt read orders prefix=c42` finds the customer's rows. A key whose
// encoding exceeds Bigtable's 4 KiB row-key limit is refused with
// ErrInvalidArgument (only keys with several long String/Binary columns).
//
// Family "c", the attribute cells: qualifier = column name, timestamp =
// version × 1000 (Bigtable timestamps are µs with millisecond granularity,
// versions are ms, so the mapping is exact), value = one type byte and the
// value:
//
//	s<UTF-8 bytes>            String    "shello"
//	i<decimal>                Integer   "i-42"
//	d<shortest round-trip>    Double    "d0.1"
//	b<true|false>             Boolean   "btrue"
//	x<raw bytes>              Binary    "x\x00\xff"
//
// The type byte keeps every value's type (an Integer 7 never reads back as
// a String "7"), and numbers stay readable in cbt. No stored value is
// empty.
//
// Family "m", bookkeeping:
//
//	m:keyonly  "1"        @0    the row is a key-only row (PutRow with no columns, SPEC §7)
//	m:rev      32 hex     @0    the row's revision, for optimistic writes (see below)
//	m:gen      decimal g  @g ms the newest options generation the row was written under
//
// m:gen is written only on tables whose options changed (Generation > 1;
// no request is older than 1), by every write that leaves data, at
// timestamp g milliseconds, so the newest timestamp is the highest
// generation and no write lowers it (a put starts with DeleteRow and
// replaces everything written before). See "Stale options" under Semantics.
//
// A row that PutRow wrote has no m:rev (and no family m unless it is
// key-only): it stores exactly the cells a raw Bigtable client would.
// UpdateRow and the optimistic writes set a fresh m:rev each time they
// leave a row; no write leaves a row holding m:rev but no c cell and no
// m:keyonly (an update that deletes a row's last data deletes the row).
//
// Auto-increment counters (SPEC §14): per partition-key value that
// received a write with tablekit.AutoIncrement, one counter row whose key
// is 00 00 and codec.EncodeKey of the partition-key value alone, holding
// m:seq, the last value assigned (8 bytes big endian, as
// ReadModifyWriteRow keeps it). No row key starts with 00 00 (see Row key:
// the least is 00 01, the empty String), and a range read whose lower end
// is unbounded starts at 00 01, so no read, range or export meets a
// counter row; DeleteTable drops them with the table. They are contiguous
// at the start of the table: a heavy auto-increment load on many
// partition keys concentrates its counter increments there.
//
// The metadata table (id "tablekit.meta", see [Options.MetaTable]) has one
// row per table, keyed by the portable name, family "t":
//
//	t:schema       {"bigtable_table":"orders.5f0c9a1e22b4d7c8","key":[{"name":"customer","type":"String"},{"name":"ts","type":"Integer"}]}
//	               (an auto-increment key column adds "auto_increment":true)
//	t:options      {"ttl":-1,"max_versions":1,"max_version_offset":86400}
//	t:incarnation  5f0c9a1e22b4d7c8
//	t:generation   1
//
// A row without t:incarnation and t:generation (written before they
// existed) is a table of the empty Incarnation at Generation 1.
//
// So `cbt read orders.5f0c9a1e22b4d7c8` shows, for one row:
//
//	c42\x00\x01=0000000000000000007
//	  c:amount                                 @ 2016/07/20-00:00:00.000000
//	    "i1250"
//	  c:note                                   @ 2016/07/20-00:00:00.000000
//	    "sfirst order"
//
// Once an UpdateRow has changed the row, it also shows m:rev at
// 1970/01/01-00:00:00.000000, holding 32 hex digits.
//
// Tables. CreateTable writes the metadata row (only if absent, which
// decides between concurrent creators), then creates the Bigtable table of
// the name and incarnation; if that fails it removes the row again. A
// Bigtable table of the id that has no metadata row is never taken over or
// deleted: CreateTable refuses it with ErrAlreadyExists naming it, for an
// operator to drop with cbt if it is theirs to drop. DeleteTable deletes
// the Bigtable table first (a missing one is fine) and the metadata row
// last, only if it still holds the incarnation deleted, so when it stops
// half way the table is still listed and DeleteTable again finishes it. The
// Bigtable table of a metadata row lost otherwise (deleted by hand, or by
// an adapter older than this order) stays, unlisted, until an operator
// drops it: a new table of the name has a new incarnation and id.
//
// Garbage collection. With [GCFull] (the default) family c gets
// MaxVersions(MaxVersions) and, for a table with a TTL, MaxAge(TTL +
// [Options.GCMargin]) in a union; UpdateTable updates it. MaxVersions GC
// deletes exactly what reads already hide. MaxAge compares cell timestamps
// with Bigtable's wall clock, so the margin (default one day) keeps a cell
// until well after it became invisible even if the clocks that stamp
// versions run behind the server's. Family m gets MaxVersions(1) and never
// an age rule (its cells are stamped 0). So a row whose c cells all expire
// and are collected by MaxAge keeps its m:rev, if an update left one, until
// the next write of the row: GC is not a write, and nothing runs then to
// delete the row. A program whose versions do not follow the wall clock
// (tests on a ManualClock) uses [GCVersionsOnly] or [GCOff]; the
// conformance harness uses GCOff, because its clocks are not the wall clock
// (the suite's own starts in 2031; some tests, such as SPEC's TTL example
// in 2016, run in the past) and bttest's GC loop would collect the past
// ones' cells by wall-clock age. A separate test proves the GCFull policies
// are set and that reads hide the same cells before and after GC runs.
//
// # Semantics
//
// Visibility. Bigtable collects garbage lazily (hours to days in
// production; in bttest only in a loop that a ModifyColumnFamilies call
// starts), so no read depends on it. Every read's row filter selects
// exactly SPEC's visible cells at the request's Now:
// TimestampRange(OldestVisible(TTL, now)×1000, ∞) then
// LatestN(MaxVersions), on family c only (m's cells are stamped 0 and take
// their own branch of an Interleave). On top come the read's own selection:
// the projection (together with the columns its filter reads), its
// TimeRange as a second TimestampRange, and its MaxVersions as a second
// LatestN. When that selection could come back empty for a row that exists,
// one more branch returns a single value-stripped visible cell that proves
// existence. Filters (SPEC §10, typed comparisons with PassIfMissing and
// LatestVersionOnly) are evaluated on the client with rowmodel.MatchFilter,
// over the cells selected this way, on every row that arrives; rowmodel
// then applies the exact rules, so the answer is the local engine's. A
// range read also pushes its filter down (see Filters below), which decides
// only which rows Bigtable sends.
//
// No filter the adapter sends uses a regex where a range does: a family is
// ColumnRange(family, "", "") rather than FamilyFilter, one column is the
// range [name, name+"\x00"), and a projection of up to 16 columns is an
// Interleave of their ranges (more: the range from the least name to the
// greatest, then one qualifier regex of the names). bttest compiles a
// filter's regex again for every cell it tests, so a projected read of ten
// columns spent most of the server's time compiling "c", "m" and the
// projection's regex (raw/tablekit 1.3–4.8 in YCSB's read-only workload);
// for Bigtable a range is the cheaper filter too.
//
// Filters. A range read's filter is pushed into the ReadRows row filter as
// a row predicate P, a Bigtable filter whose output is not empty when the
// row may pass, and the row filter is Condition(P, the selection above,
// nothing): Bigtable then sends only the rows P keeps. P is exact (it keeps
// exactly the rows that pass) or a pre-filter (it keeps every row that
// passes and maybe others); the client evaluates the filter on every row
// that arrives either way, so P never decides a result on its own.
//
//   - A comparison tests the cells SPEC says it tests: of its column, the
//     visible versions in the read's time range, the newest one (or the
//     newest MaxVersions with AllVersions), chained with ValueRange filters
//     over the cell encoding. The type byte comes first, so a range never
//     meets another type's cell. String, Binary and Boolean encodings order
//     as their values, so all six operators are exact (!= is two ranges);
//     an Integer or Double has one encoding per value, so == and != are
//     exact for Integers and nonzero Doubles (±0 are equal with two
//     encodings). The other comparisons of Integers and Doubles (decimal
//     text does not order as numbers) and == / != of ±0 are a pre-filter:
//     the whole type's range. A column that may be missing (the default,
//     PassIfMissing) makes it Condition(match, PassAll, "no selected cell
//     of the column"), the latter being Condition(the column, nothing,
//     PassAll).
//   - And is nested Conditions (exact when every part is; a part that
//     cannot be pushed is left out, making the rest a pre-filter), Or an
//     Interleave (one part that cannot be pushed leaves the whole Or on the
//     client), Not is Condition(P, nothing, PassAll) and is pushed only
//     when P is exact (the negation of a pre-filter would drop rows).
//   - Left on the client: a filter with more than 16 comparisons or more
//     than 4 KiB of comparison values (Bigtable caps a row filter at about
//     20 KB), and every filter of GetRow and BatchGetRow (one row each: a
//     Condition there would save at most the transfer of that one row).
//
// With an exact P a page is sized like an unfiltered read's (LimitRows of
// what it still wants, plus one); with a pre-filter, like a client-side
// filter's (below). Bigtable then examines rows that fail P without
// sending them, and without counting them against MaxScanRows: a page of
// a pushed filter ends when it is full or the range is, however many rows
// Bigtable skipped on the way (that is Bigtable's work, not the client's
// or the network's). Cells written by another tool in a form appendValue
// never writes (say "i007") may be dropped by P where the client-side rule
// would have reported them as corrupt. Bigtable documents that a
// Condition's predicate is not evaluated atomically with its branches; a
// row whose P saw one version of the row and whose selection another is
// still decided by the client on the cells that arrived, and a row P
// dropped failed on a state the row held during the read, so each row's
// answer is that of a moment within the read (bttest evaluates both on
// one copy).
//
// Writes and atomicity. Each write takes the cheapest path that is exact
// and atomic on its row:
//
//   - Blind writes (no condition; PutRow, DeleteRow, and UpdateRow with only
//     Put and DeleteColumn changes) are one MutateRow. PutRow is DeleteRow +
//     the cells as given (versions beyond MaxVersions included: reads hide
//     them like any hidden version, and the write needs no options, which
//     may be stale); an UpdateRow also sets a fresh m:rev.
//   - A blind UpdateRow whose every column ends deleted (no Put survives,
//     so it may leave no c cell) is one CheckAndMutateRow instead: the
//     predicate passes iff the row has a c cell in a column the update does
//     not touch, or m:keyonly (column ranges between the deleted names);
//     true applies the update, false deletes the row. Either way the result
//     is the update's, minus an m:rev that would be the row's only cell,
//     decided atomically on the row. (With more than 64 columns it is
//     optimistic.) In a batch it runs as a single-row call.
//   - The same writes under a row-existence condition without a column
//     filter are one CheckAndMutateRow whose predicate passes iff the row
//     exists at Now (a TTL-visible c cell or m:keyonly); an UpdateRow whose
//     every column ends deleted is optimistic instead, since that
//     predicate already takes the one condition slot.
//   - Everything else (a column condition, Increment, DeleteVersion) is
//     optimistic: read the row's visible cells and m:rev, compute the new
//     row with package rowmodel, then CheckAndMutateRow on a predicate that
//     holds only if the row is still what was read, retrying with jittered
//     backoff when another write got in between. Increments are written at
//     the request's Now, which ReadModifyWriteRow (server time, 8-byte
//     big-endian values) cannot do. The columns an update touches are
//     rewritten exactly (rewriteColumn): first the new or changed cells are
//     set, then the visible cells that go are deleted one by one, then
//     every timestamp below the oldest visible cell except the kept cells'
//     own, so a version MaxVersions hid can never come back into view when
//     a newer one is deleted, and a column that keeps cells is never empty
//     in between. An update that leaves no visible cell and no marker
//     deletes the row.
//   - A write whose key holds tablekit.AutoIncrement (SPEC §14) has its
//     condition evaluated on an absent row (the row is new), then takes
//     its value with one ReadModifyWriteRow (increment m:seq of the
//     partition's counter row by 1: atomic, so values are unique and each
//     is above every one handed out before), then is one CheckAndMutateRow
//     whose mutation goes in the false branch of "the row has any cell": a
//     put if absent, never an overwrite. The predicate holds only when the
//     counter is behind a stored row (written with an explicit value, or
//     the counter row was deleted): the write then reads the greatest
//     value of the column among the rows sharing the key's columns before
//     it (one reverse ReadRows of one row), takes a value past it and tries
//     again, at most 16 values (then ErrConditionFailed, nothing written).
//     A write that fails after taking a value leaves a gap, never a
//     duplicate. A batch takes the values of its such writes first, one
//     ReadModifyWriteRow per partition key, in request order, then runs
//     them as single-row calls. Bigtable has no atomic writes (SPEC §13):
//     the backend declares AutoIncrement, not AtomicWrite, in Capabilities.
//
// The revision rule: a mutation that starts with DeleteRow (PutRow,
// DeleteRow, an update that empties the row) removes m:rev; every other
// mutation that changes a row sets a fresh one, unique to the write (a per-Backend random prefix and a
// counter) and never written again. So "m:rev still holds the value read"
// means no write touched the row since the read, and the optimistic
// predicate is exact. A row read with no m:rev is either visibly empty,
// and then the write goes in the false branch of "m:rev, a visible cell or
// m:keyonly exists" (still empty at the check is all the computation
// assumed), or it was last written by a PutRow, which a later PutRow with
// other values would replace without a trace a predicate could test; then
// the write first stamps the row (CheckAndMutateRow "any c cell or
// m:keyonly" → set a fresh m:rev, which changes no data and never creates
// a row or lands on one without data) and reads again.
// No update is lost, and each single-row operation is linearizable (a
// failed condition is decided on one consistent read); the conformance
// suite's linearizability check and TestOptimisticSeesInterleavedWrites,
// which lands writes between the read and the check, hold it to that.
//
// Leaving m:rev out of PutRow is a trade: the commonest write, alone and in
// batches, stores one cell fewer (it was a tenth of the cells of a 10-column
// row and the largest part of the adapter's cost on a batch, see
// BENCHMARKS.md), and rows read back carry nothing but their data, while the
// first optimistic write after a PutRow pays two extra calls (the stamp and
// a second read). An adapter built before this rule (every write set m:rev)
// reads rows without m:rev correctly but must not run optimistic writes on
// tables this version writes: it takes "no m:rev" to mean an empty row.
//
// Stale options. A Client may write with cached options older than the
// table's (SPEC §3): it must never trim a version written under newer ones.
// Only the optimistic path trims with the request's options (rewriteColumn,
// and a conditional put's rowmodel.Put), and it reads m:gen with the row
// into rowmodel.Row.Generation: rowmodel refuses a request whose
// Meta.Generation is older with driver.ErrStaleMeta, on a read the
// predicate proves current, and the Client reads the table again and
// retries. Every write on a table whose Generation is above 1 stamps the
// rows it leaves, blind ones included: a version a blind write adds is
// written under its generation as much as any other, and a stale
// optimistic write to the same column would otherwise trim it. Blind
// writes never trim, so they need no check. A write that would reveal a
// version newer options hide (a DeleteVersion that keeps older versions
// of its column, rowmodel.Reveals) first reads the metadata row and
// refuses a request older than it (rowmodel.CheckGeneration): one more
// call, for those writes only; an UpdateTable landing between that read
// and the CheckAndMutateRow is not covered. UpdateTable is one
// CheckAndMutateRow on the metadata row, conditioned on t:incarnation and
// t:generation holding the request's (ErrTableNotFound for another
// incarnation, ErrConditionFailed for another generation); it stores
// Generation+1.
//
// Batches and ranges. BatchWriteRow sends all blind writes of a table as
// one MutateRows (ApplyBulk) call and runs the others as single-row calls,
// all in parallel (driver.Parallel, Options.Concurrency at once), with a
// result per row (the Client never sends two writes of one row in one
// call). BatchGetRow groups reads by table and selection, one ReadRows over
// a RowList per group, groups in parallel.
//
// GetRange streams ReadRows (with ReverseScan for Backward) over the key
// range that codec.Bound gives for InfMin/InfMax bounds; the first row
// past the page is never returned, its key is the page's Next. Calls are
// sized by what the page may have to examine, not by the rows it still
// wants: a read without a filter asks for LimitRows(limit+1) (continuing
// with calls of at least twice the size when rows with nothing visible were
// dropped), and so does a read whose filter is pushed down exactly (see
// Filters); a read with a filter evaluated on the client, or pushed down
// as a pre-filter, asks for the page's whole scan budget (MaxScanRows+1
// rows) in one stream and cuts it as soon as the page is full. So
// GetRange(Limit(1), WithFilter(...)) over 12,000 rows that only the last
// passes is, with the filter on the client, two ReadRows calls (one per
// page of 10,000 examined rows), not one call per two rows as it once was
// (15–19 s); pushed down, it is one call that brings the one row. Memory
// stays bounded by one page whatever the range.
//
// Reads copy no more than they must: a String or Binary value is a view of
// the bytes the Bigtable client allocated for the row it handed over (see
// bytesView), the rows of one read share their []Column arrays (each row's
// slice capped), and a read without filter or time range takes the
// server's selection as the answer, since its filter is an exact
// translation of SPEC's visibility and MaxVersions rules and of the
// projection.
//
// # Limits
//
// Beyond SPEC's own limits:
//
//   - A key whose encoding exceeds Bigtable's 4 KiB row-key limit is
//     refused with ErrInvalidArgument (only keys with several long
//     String/Binary columns).
//   - Table ids are at most 50 characters: a longer name is mapped (see
//     Storage layout), never refused.
//   - A range read's filter is pushed down only up to 16 comparisons and
//     4 KiB of comparison values (Bigtable caps a row filter at about
//     20 KB); a larger one is evaluated on the client, with the same
//     answer.
//   - A blind UpdateRow that deletes every column it names is one
//     CheckAndMutateRow up to 64 columns, optimistic beyond.
//   - Garbage collection follows Bigtable's wall clock (see Garbage
//     collection under Storage layout): programs whose versions do not
//     follow it choose [GCVersionsOnly] or [GCOff].
//   - No change feed (SPEC §15): enabling one fails with ErrUnimplemented
//     and Capabilities().ChangeFeed is false. Bigtable has change streams,
//     but the Go client (v1.57) only enables them
//     (UpdateTableWithChangeStream) and has no reader, and bttest serves
//     none. Adding it would take a ReadChangeStream reader on the raw
//     bigtablepb stubs (ListChangeStreamPartitions as shards, continuation
//     tokens as checkpoints, CloseStream's new partitions as children),
//     decoding SetCell/DeleteCells/DeleteFamily of this layout into
//     tablekit changes while dropping the bookkeeping family and GC
//     deletes, and tests against recorded real traffic, there being no
//     emulator.
//
// # Errors
//
// Every error that came from Bigtable is a *tablekit.Error whose Err is
// the gRPC status error, so errors.As (or status.FromError) reaches it;
// its Code follows SPEC §12 (see codeOf in errors.go: Unauthenticated and
// PermissionDenied, and no credentials at all (Open without Application
// Default Credentials), are ErrPermissionDenied, a message over gRPC's size
// limit ErrInvalidArgument, other ResourceExhausted ErrThrottled, only
// transient codes ErrUnavailable). A table of the name whose Bigtable
// table exists without a metadata row is ErrAlreadyExists (see Tables
// under Storage layout); a write computed from stale options is
// driver.ErrStaleMeta, which the Client retries.
package gcpbigtable
