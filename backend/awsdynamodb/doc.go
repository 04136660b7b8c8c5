// Package awsdynamodb is for programs that keep tablekit tables in Amazon
// DynamoDB or a DynamoDB-compatible server such as dynalite: the tablekit
// backend built on github.com/aws/aws-sdk-go-v2/service/dynamodb, which
// passes the whole conformance suite on dynalite (without atomic writes)
// and on moto (with them).
//
//	be, err := awsdynamodb.Open(ctx, nil) // default AWS configuration and credential chain
//	// or awsdynamodb.Open(ctx, &awsdynamodb.Options{Region: "eu-west-1", Endpoint: "http://127.0.0.1:8000"})
//	// or awsdynamodb.New(existingClient, &awsdynamodb.Options{Shards: 16})
//	db := tablekit.NewClient(be)
//	defer db.Close()
//
// What it costs against the raw SDK doing the same work, and how that was
// measured, is in BENCHMARKS.md beside this file.
//
// # Opening
//
// [New] refuses the [Options] fields that configure the client Open builds
// (AWS, Region, Endpoint, ClientOptions) rather than ignore them: an
// endpoint meant for an emulator is never silently dropped.
//
// Importing the package registers the dynamodb:// URL scheme ([Scheme]):
// tablekit.Open(ctx, "dynamodb://?region=eu-west-1&shards=16") opens the
// same backend with the default credential chain.
//
// Close closes the idle connections of the HTTP transport Open built (when
// Options.AWS has no HTTPClient of the caller's); it never closes a client
// given to New, nor an HTTP client given in Options.AWS.
//
// # Native access
//
// The native client is the escape hatch to what tablekit does not cover:
//
//	var client *dynamodb.Client
//	if db.As(&client) { … }  // or be.Client()
//
// [Backend.NativeTableName] names a table's DynamoDB table and
// [Backend.TableLayout] reports its layout; the storage layout below says
// what each item holds, for reading tables with the AWS console or CLI.
//
// # Storage layout
//
// Each portable table is one DynamoDB table (PAY_PER_REQUEST), its
// physical name: the portable name behind an optional prefix
// ([Options.TablePrefix]), then a '.' and the table's incarnation (16 hex
// digits that tablekit.Client.CreateTable draws anew for every creation):
// table "orders" is DynamoDB table "orders.5f0c1d2e3a4b6978". Names
// shorter than 3 bytes are padded with '-', names longer than 255 are cut
// and end in '-' and 16 hex digits of their SHA-256. Portable names never
// contain '-' or '.', so the mapping is injective; ListTables and
// DescribeTable report the portable name, [Backend.NativeTableName] the
// physical one (it reads the metadata).
//
// The incarnation in the name is what makes a table deleted and created
// again a new table (SPEC §3): a Client in another process that still
// holds the old metadata addresses a DynamoDB table that no longer exists,
// gets ErrTableNotFound, reads the metadata again and retries against the
// new table (or refuses the call if the new schema does not take it); it
// can never write into the new table with the old schema or options. The
// cost: the DynamoDB table name changes with every re-creation, so IAM
// policies, alarms and dashboards must match "orders.*" rather than
// "orders"; 17 bytes of DynamoDB's 255 go to the incarnation (portable
// names longer than about 238 bytes, less the prefix, are hashed); and a
// request's table name is 17 bytes longer. A table whose metadata has no
// incarnation (made before incarnations) keeps its name without one; a
// re-creation by a process that predates incarnations is not noticed.
//
// DynamoDB hashes partition keys, so rows of different partition keys come
// back in no order. SPEC's ordered GetRange over the whole table uses write
// sharding: every table has a fixed number N of shard keys, chosen at
// CreateTable ([Options.Shards], default 8) and recorded in its metadata,
// with the placement that maps a row to its shard. With h =
// FNV-1a-64(codec.EncodeKey(first key column)):
//
//   - placement 1, which every table made now records (metadata attributes
//     placement = 1 and placedShards = N): shard = the high word of the
//     128-bit product splitmix64fin(h)·N (splitmix64's finalizer;
//     internal/base.Spread), so every bit of the key counts.
//   - no placement attribute (tables made before it was recorded; their N
//     is in shards): shard = h mod N, as they were written; they keep it. FNV-1a's low bits
//     depend only on the low bits of the key's bytes, so keys whose bytes
//     repeat a pattern fill only some shards: an index's entry keys
//     (index value and row key sharing their last digits) filled 2 of 4,
//     keys with every byte twice 1 of 4 (TestPlacementFair), each shard
//     then taking the writes of two or four and a whole-table range
//     reading the full ones in more Queries.
//
// A placement this adapter does not know (written by a newer one) makes
// the table's metadata unreadable (ErrUnavailable naming it) rather than
// its rows looked for in the wrong shards; an adapter from before
// placements, which requires shards, finds a new table's metadata
// malformed (ErrUnavailable) for the same reason. Mixing the two while
// tables are created (a rolling upgrade that creates tables or indexes)
// thus fails loudly in the old processes until they are upgraded. An item is
//
//	.s   N  partition key: the shard, 0..N-1, by the table's placement
//	.k   B  sort key: codec.EncodeKey (backend/codec) of the whole primary key
//	        (order-preserving; Strings stay readable: "a" → 61 00 01)
//	.r   S  revision, on every item: 11 random characters (8 random
//	        bytes, base64url), replaced by every write; then, when the row
//	        has text cells (below), a space and their base version in
//	        decimal: the version most of them share (the newest of the most
//	        frequent), which they then leave out. Every cell of a write that
//	        sets no version has the write's Now, so usually no text cell
//	        carries a version.
//	.m   BOOL  true on a key-only row (PutRow with no columns)
//	.g   N  the options generation (TableMeta.Generation) the row was
//	        last written under (see Stale options); absent when 0, and
//	        when 1 on a table with an incarnation, whose generations start
//	        at 1 (so an item of a table whose options never changed has
//	        no .g: it would cost about 5% of a 100-row range read)
//	.x   N  epoch seconds a day after every cell has expired: max over
//	        cells of floor(version/1000) + TTL + 86400, with the TTL the
//	        writer had; only when TTL ≠ -1, never on a key-only row. Native
//	        TTL is enabled on it where the server supports it, to reclaim
//	        space only (see Native TTL below).
//	.c   S  every column with no Binary version ("text" columns), in
//	        ascending name order: the name, then per version, newest
//	        first, '~' payload length, '@' version unless it is the base
//	        version, a type letter and the payload. Types: S (the string),
//	        I (decimal), D (Go's shortest 'g' form, which round-trips every
//	        float64, -0 and 1e300 included — DynamoDB's N could not) and B
//	        (t/f). Integer and Double are both N in DynamoDB, so the type is
//	        stored, not inferred. Readable, e.g. "n~1I3note~2Shi".
//	.u   N  how many one-call updates (below) changed the item since it
//	        was last written whole; absent until the first
//	<column>  S  an overlay cell: one version of the column a one-call
//	        update wrote, in an attribute named after the column: 16
//	        lower-case hex digits of the version with its sign bit flipped
//	        (so that string order is version order), a type letter and the
//	        payload as in .c, or X and the unpadded standard base64 of a
//	        Binary value, e.g. "8000018bcfe56800Shi". A read merges overlay
//	        cells with .c/.b (at one version the overlay cell wins: every
//	        whole write drops the overlays); the next whole write folds them
//	        back in. With MaxVersions 1 an item has at most one per column.
//	.w   S  the write's kind (P, U, D) and Now in ms; while the table's
//	        change feed is on, before a deletion also a space and a random
//	        part (see Change feed below)
//	.b   B  every column with a Binary version, in ascending name order:
//	        byte 0x02, then per column a uvarint name length, the name, a
//	        uvarint version count and per version, newest first, an 8-byte
//	        big-endian version, 1 type byte (1 String, 2 Integer, 3 Double,
//	        4 Boolean, 5 Binary) and the value (Integer/Double 8 bytes big
//	        endian, Boolean 1 byte, String/Binary a uvarint length and the
//	        bytes). (Text is the default because base64 B attributes cost
//	        more, on the wire and in dynalite, than S.)
//
// Reserved attributes start with '.', which no column name can contain; an
// item has no other attributes than those and overlay cells (anything else
// is reported as malformed, as ErrUnavailable), and .c and .b never hold
// the same column.
// Example: table "orders", key (customer String, id Integer), N = 8,
// options never changed (generation 1), row
// ("c42", 7) with note = String "hi" and score = Integer 3, both at version
// 1700000000000, an older version of score, String "héllo" at
// 1699999999000, and blob = Binary ab at 1700000000000:
//
//	.s = 3                      (placement 1 of 63 34 32 00 01 with N = 8; also
//	                             FNV-1a-64 of it mod 8, the older placement)
//	.k = 63 34 32 00 01 3d 30 30 … 30 37   ("c42", then "=" and 19 digits)
//	.r = "q3Lh0v7T4ZA 1700000000000"
//	.c = "note~2Shiscore~1I3~6@1699999999000Shéllo"
//	.b = 02 04 62 6c 6f 62 01 00 00 01 8b cf e5 68 00 05 01 ab
//
// A row written whole is thus at most eight attributes (usually at most
// seven), however many columns it has; one-call updates add one per
// column they wrote, until the next whole write.
// That is the layout's main point: DynamoDB's JSON protocol, the SDK's
// decoder and dynalite all pay per attribute (a JSON object each, an
// AttributeValue and a map entry each), so a row of ten columns as ten
// attributes took 25–30% longer to read, on dynalite, than the same bytes
// in one (see BENCHMARKS.md). Conditions and filters are evaluated by the
// adapter on the decoded row (see Semantics), never by DynamoDB
// expressions on columns, so they lose nothing by it; what is given up is
// a ProjectionExpression fetching only some columns of a wide row, which
// the adapter never used (a read's projection applies after decoding).
// This is the only layout: nothing was released before it, so the adapter
// reads no other.
//
// Auto-increment counters (SPEC §14). A table with an auto-increment key
// column also holds, per partition-key value that received a write with
// tablekit.AutoIncrement, one counter item: .s = -1 - the value's shard
// (negative, so no read, range or export, each of which queries shards
// 0..N-1, ever meets it), .k = codec.EncodeKey of the partition-key value
// alone, and .n (N) the last value assigned (a DynamoDB Streams reader
// drops their records). See Auto-increment under Semantics.
//
// Metadata. Schemas and options live in one metadata table (default
// "<prefix>tablekit.meta", hash key "name" S), one item per portable table:
// name, native, key (list of {name, type}, and autoIncrement true on an
// auto-increment column), ttl, maxVersions,
// maxVersionOffset, shards (or placement and placedShards; see Storage
// layout), nativeTTL
// (whether DynamoDB's TTL is on for the table), incarnation and generation
// (absent on tables made before them: DescribeTable then reports an empty
// Incarnation and Generation 0).
// CreateTable claims the name there with a conditional put, then creates
// the DynamoDB table and waits for ACTIVE; DeleteTable removes the item,
// then the DynamoDB table it names. UpdateTable is one conditional
// UpdateItem of the item: it applies only while the item still has the
// incarnation and generation the Client read (else ErrTableNotFound,
// respectively ErrConditionFailed, and the Client reads the table again),
// and stores the options and generation+1.
//
// CreateTable never deletes a DynamoDB table. If one of the native name
// already exists (the account's own table of that name, or one left by a
// DeleteTable interrupted after removing the item), CreateTable fails with
// ErrAlreadyExists naming the DynamoDB table, releases the name in the
// metadata table and leaves the table and its items alone; delete it by
// hand or pick another [Options.TablePrefix]. A table still being deleted
// (status DELETING) is waited for. The backend caches each incarnation's
// physical name and shard count (they never change); a request whose
// incarnation is not the cached one reads the metadata item again.
//
// # Semantics
//
// Reads are consistent (ConsistentRead) GetItem, BatchGetItem and Query
// calls; MaxVersions, TTL, time ranges and filters are applied by package
// rowmodel on the decoded item with the request's Now, so expired and
// surplus versions are hidden on every read and condition, whatever
// DynamoDB's lazy TTL has or has not deleted.
//
// An unconditional PutRow is one PutItem and an unconditional DeleteRow one
// DeleteItem. Two more shapes are one conditional call, with no read:
//
//   - An UpdateRow whose changes are all Puts of distinct columns (at most
//     32, of at most 64 KiB together), on a table with MaxVersions 1, with
//     no condition, or a row existence alone on a table without TTL: one
//     UpdateItem that writes each cell as an overlay attribute (see the
//     layout), conditioned on the column's overlay cell, if any, being no
//     newer than the new cell (it is the only stored cell the update
//     replaces, and it is hidden once the new one is written), on the row's
//     generation being no newer than the request's, and under a TTL on the
//     item's expiry .x being no later than the new one (which it sets) and
//     on the row not being key-only (a key-only row's item carries no .x).
//     It adds one to .u.
//   - A PutRow or DeleteRow whose condition is a row existence alone, on a
//     table without TTL (where a row exists exactly when its item does): a
//     PutItem or DeleteItem conditioned on that and on the generation.
//
// When such a call's condition fails, or DynamoDB refuses it as invalid (an
// item grown past 400 KB), the write takes the optimistic path, which gives
// the exact outcome; a failed existence condition thus costs two calls (the
// failed one and the read), where the optimistic path alone read once.
// Every other write (increments, deletes of columns or versions, column
// conditions, MaxVersions above 1) is optimistic: a consistent GetItem,
// rowmodel.Apply, then a PutItem or DeleteItem conditioned on the revision
// read and on .u as read (or on the item's absence), retried with jittered
// backoff when another writer got there first, at most 100 rounds in all:
// a row changed between each read and write that often fails the write
// with ErrThrottled naming the table, key and limit, not applied. A
// one-call update changes
// .u, so an optimistic write that read the item before it fails its
// condition and reads again. Each single-row operation is therefore atomic
// and linearizable and no concurrent update is lost
// (TestConcurrentOneCallUpdatesLoseNothing races one-call updates with
// increments on one row). Single-row writes use no DynamoDB transactions.
//
// A conditional call sent again: the SDK sends a call again when its
// answer was lost (a reset connection, a 5xx), and the second attempt's
// condition then fails on the item the first one wrote. Every item a
// conditional put or optimistic write stores carries a revision unique to
// that call (a one-call update's lands when it makes the row), so the
// read that follows a failed condition tells "this write landed" from
// "another writer got there first": the write then succeeds, applied once
// (an increment is not added twice, a PutRow with ExpectNotExist does not
// fail on its own row; TestConditionalWriteAnswerLost loses each kind of
// answer). A delete leaves no item to tell by: a conditional DeleteRow
// whose answer is lost and whose retry finds the row gone fails its
// condition, as a bare DeleteItem would.
//
// Why even an update of Puts with no user condition on a MaxVersions-1
// table is conditional (each term is what one SPEC rule needs, and none can
// be dropped without a read that would cost a call):
//
//   - The term per column (its overlay cell no newer than the new cell):
//     SPEC §5, the newest version wins. A version is the writing client's
//     clock (or given), and two clients' clocks differ by up to
//     MaxVersionOffset; without it, the later write of an older version
//     would replace the column's newer cell, which would be lost, and the
//     older value read as the newest.
//   - The generation term (.g no newer than the request's): SPEC §3, a
//     write made with cached options never removes a cell written under
//     newer options, and a client with stale options is refused (the
//     Client then reads the table and retries, validating the write's
//     versions and TTL against the current options).
//   - The revision set if absent and the ADD to .u: an optimistic write
//     that read the item before this update must fail its condition, or it
//     would write back the row without this update's cells.
//
// What they cost was measured on dynalite (ycsb/README.md, "DynamoDB: what
// the update's condition costs"): the same request with one term on an item
// attribute in place of the ten per-column ones costs as much as the
// adapter's (UPDATE p50 adapter/one-term 0.86-1.08), and 1.16-1.54 times a
// plain UpdateItem: the store's price is that of a conditional update that
// sets its bookkeeping, not the number of terms, and the adapter's own work
// is within the noise of it. Part by part (BenchmarkUpdateShapes, the raw
// SDK adding one part at a time to a plain UpdateItem): the two terms about
// 1.06-1.08 together, the revision's if_not_exists 1.02-1.07, the ADD to .u
// and the .w stamp nothing measurable, all of it 1.19-1.21 (ycsb/README.md,
// "the update, part by part"). DynamoDB charges a conditional update the same
// write capacity as a plain one.
//
// Atomic writes (SPEC §13, tablekit.Client.AtomicWrite) are one
// TransactWriteItems: writes that need no read (puts and deletes that are
// unconditional, or conditioned on existence only, without TTL) go in at
// once, conditioned as their one-call forms; the others are read with one
// consistent BatchGetItem, computed with rowmodel.Apply and conditioned on
// the revision read. A failed SPEC condition is returned for its write
// before anything is sent; a transaction canceled by another writer is
// read and sent again (at most 64 times). A write that could bring a
// hidden version back into view carries a ConditionCheck on the table's
// metadata item (its incarnation and options Generation), so no UpdateTable
// can slip in between. A store without TransactWriteItems (dynalite) needs
// [Options.NoTransactions] (?transactions=false): the backend then declares
// no atomic writes and the Client refuses them. The adapter's tests of
// atomic writes, and a second run of the conformance suite, use moto.
//
// Auto-increment (SPEC §14; dynalite included, no transaction needed): a
// write whose key holds tablekit.AutoIncrement has its condition
// evaluated on an absent row (the row is new), then takes its value from
// the partition's counter item with one UpdateItem (ADD .n 1, ReturnValues
// UPDATED_NEW: atomic, so values are unique and each is above every one
// handed out before), then is one PutItem conditioned on
// attribute_not_exists(.k): two calls, never an overwrite. That condition
// fails only when the counter is behind a stored row (written with an
// explicit value, or the counter item was deleted): the write then reads
// the greatest value of the column among the rows sharing the key's
// columns before it (one Query of one item), takes a value past it (one
// UpdateItem) and tries again, at most 16 values (then ErrConditionFailed,
// nothing written). A batch takes the values of such writes first, one
// UpdateItem (ADD n) per partition key, in request order; so does an
// atomic write, before its TransactWriteItems (whose items carry
// attribute_not_exists(.k) and are never read). A write that fails after
// taking a value leaves a gap, never a duplicate.
//
// Change feed (SPEC §15) is DynamoDB Streams (NEW_AND_OLD_IMAGES), read
// with the dynamodbstreams client built from the DynamoDB client's
// options. A record is decoded from the item's old and new images with
// this layout: a put's record is the new item's cells, an update's the
// difference of the two (applying it gives the row after the write; it
// may leave out a change that changed nothing, or add the deletion of a
// version MaxVersions dropped). While the feed is on (recorded in the
// metadata item), writers delete in two calls (stamp, then delete on the
// stamp), so that deletions, deletions of absent rows included, carry
// their kind and time too; every item carries .w, the write's kind and
// time, whether the feed is on or not. So a put or update by a backend
// that read the table's metadata before the feed was enabled (a
// tablekit.Client reads it again after a minute by default) has its kind
// and commit time; its deletion, one DeleteItem, is a Delete at the
// stream record's approximate time. DynamoDB's TTL deletions and the
// auto-increment counters are not recorded; a record that does not
// decode as a row fails the read with ErrUnavailable naming the shard
// and sequence number, never dropped. Shards are
// "<stream label>/<shard id>"; enabling again after disabling makes a new
// stream whose shards follow the last ones of the previous stream. The
// retention is DynamoDB's fixed 24 hours: EnableChangeFeed refuses any
// other with ErrInvalidArgument. A store without DynamoDB Streams
// (dynalite) needs [Options.NoStreams] (?streams=false): the backend then
// declares no feed. A table created WithChangeFeed has its feed from its
// first write (tablekit.FeedCreator, Capabilities.CreateWithFeed): the
// metadata item is claimed with its feed attribute and the DynamoDB table
// created with its StreamSpecification, in its CreateTable call. The
// feed's tests run on moto (mended as
// internal/testkit/mototest says: moto 5.2.1 breaks a table whose stream
// is disabled).
//
// BatchGetRow groups keys per table in BatchGetItem calls of at most 100;
// BatchWriteRow sends unconditional puts and deletes in BatchWriteItem calls
// of at most 25 and every other write through the optimistic path. The calls
// run in parallel ([Options.Concurrency], default 8); UnprocessedKeys and
// UnprocessedItems are retried with capped, jittered exponential backoff
// until done or the context ends, and calls that failed outright with a
// throttling, server or transport error are sent again up to 8 times in a
// row without progress, unless the SDK has already retried them (more than
// one attempt, or its retry quota ran out): what the SDK gave up on is
// never retried again. Each row gets its own result.
//
// Stale options: a tablekit.Client caches each table's options (see
// tablekit.WithMetaCacheTTL, one minute by default) and passes them, with
// their generation, to the backend in every request. The optimistic path
// writes back the row rowmodel.Apply returns, trimmed under those options
// (cells expired under its TTL and versions beyond its MaxVersions are
// dropped from the stored item), and stamps it with their generation (.g).
// It reads the row's generation first: a row last written under a newer
// generation than the request's is not rewritten; the write fails with
// driver.ErrStaleMeta, and the Client reads the options again and retries,
// so a client with stale options never trims what newer options keep (SPEC
// §3). Nor does it reveal what newer options hide (SPEC §5): a write that
// removes a stored version while keeping an older one of its column (a
// DeleteVersion, rowmodel.Reveals) first reads the metadata item and
// refuses a request older than it (one more GetItem, for those writes
// only; an UpdateTable landing between that read and the conditional
// write is not covered). An unconditional PutRow replaces the row without reading it, so it
// cannot check, but it loses nothing that SPEC keeps (the row is replaced
// anyway); it stores its cells as its options keep them, stamped with
// their generation. Reads store nothing, so they lose nothing; they hide by
// the cached options until the entry expires.
//
// Native TTL: CreateTable enables DynamoDB's TTL on .x where the server
// supports it and records nativeTTL (see [Backend.TableLayout]); dynalite
// answers UpdateTimeToLive with UnknownOperationException, so there
// nativeTTL is false and read-time hiding is all. DynamoDB deletes an item
// once its .x has passed, and .x was computed with the TTL of the item's
// last write. Hence the rule: an UpdateTable that raises TTL (a larger
// value, or -1) on a table with nativeTTL true first turns DynamoDB's TTL
// off (UpdateTimeToLive, Enabled false) and records nativeTTL=false, for
// good: lowering TTL later does not turn it back on, and the table's
// expired rows then stay stored (hidden) until rewritten or deleted. If
// turning it off fails, UpdateTable fails and the TTL is unchanged (DynamoDB
// allows one TTL change per table per hour, so raising TTL within an hour
// of CreateTable fails with the SDK's error and can be retried later). An
// UpdateTable that lowers TTL or leaves it keeps native TTL: every .x is
// then at or after the new expiry. The metadata update is conditioned on
// the generation and nativeTTL it read, so concurrent UpdateTables cannot
// combine into an unnoticed raise. The 86400 s margin in .x covers a writer's clock
// running behind DynamoDB's and the up to an hour DynamoDB takes to stop
// deleting after TTL is turned off, so no cell visible when TTL is raised is
// deleted. Raising TTL may still bring back cells that had already expired,
// as long as DynamoDB has not yet deleted their item (SPEC leaves this
// open).
//
// Range reads. All rows of one partition-key value live in one shard and
// are contiguous in sort-key order, so a range whose bounds pin the first
// key column to one value is a single Query on one shard, with sort-key
// bounds from codec.Bound, reading only that value's items. Any other
// range is an N-way merge of parallel Queries, one per shard, streamed page
// by page (small first pages, doubling, a shard's next page prefetched when
// its buffer runs low against its share of what the page still needs), at
// most Options.Concurrency Queries in flight: a GetRange call reads the
// Limit+1 items it needs plus what the shards' first pages over-fetch (a
// shard's share and a quarter, plus 8, at least 16 items each), never the
// whole range. A Query already sent is never aborted (when the page is
// complete, it finishes in the background and is dropped), since dynalite
// exits when a client drops a request it is still reading. A read with a
// filter is sized by what it may have to examine instead: first pages of at
// least 1,024 items (shared among the shards), doubling up to the scan cap
// (MaxScanRows), so GetRange(Limit(1), WithFilter(...)) over 12,000 rows
// that only the last passes costs 6 Queries with one shard (32 with 8),
// about as long as reading the range whole, where it was one Query per two
// rows (4–5 s; BenchmarkFilteredRange). Filters are evaluated on the
// client: a row's cells are one attribute, so no FilterExpression can see a
// column (see Storage layout), and SPEC §10's typed
// comparisons would not map onto DynamoDB's anyway. More shards spread
// writes (each DynamoDB partition key takes about 1000 WCU/3000 RCU) but
// make cross-partition ranges cost N Queries per page; see BENCHMARKS.md.
//
// # Limits
//
// Limits DynamoDB adds to SPEC's: an item is at most 400 KB (attribute names
// included) and a sort key at most 1024 bytes. A write whose item or key
// would exceed them fails with ErrInvalidArgument naming the table, the key
// (its start: tablekit.PrimaryKey.String) and the limit, before anything is
// written; a read of such a key finds no row.
//
// A one-call update takes at most 32 Puts of at most 64 KiB together (a
// larger one is optimistic, not refused). DynamoDB allows one TTL change
// per table per hour, so raising TTL within an hour of CreateTable fails
// with the SDK's error (see Native TTL under Semantics). A table's shard
// count is fixed at CreateTable. An atomic write is a DynamoDB
// transaction: at most 100 writes (SPEC's limit too) and 4 MB of items
// (DynamoDB counts whole items, so an update of a large row counts the
// row); past that it is ErrInvalidArgument naming the write, nothing
// written.
//
// A follower stays within DynamoDB Streams' limits (5 GetRecords a
// second per shard, iterators expiring after 15 minutes): the backend
// keeps each shard's NextShardIterator between reads and spaces a shard's
// GetRecords calls 200 ms apart (see feediter.go). On a store without
// TransactWriteItems or DynamoDB Streams opened without
// transactions=false or streams=false, the first atomic write or feed
// call answers ErrUnimplemented naming the parameter (probe.go).
//
// # Errors
//
// Every error wraps the SDK's own, so errors.As(err, &rnf) with rnf a
// *types.ResourceNotFoundException, or a smithy.APIError, works through
// *tablekit.Error.Err. The portable codes (SPEC §12): ResourceNotFound is
// ErrTableNotFound; ConditionalCheckFailed ErrConditionFailed;
// UnrecognizedClient, InvalidSignature, AccessDenied, ExpiredToken,
// MissingAuthenticationToken(Exception) and IncompleteSignature
// ErrPermissionDenied, and so is no credentials at all (the SDK's
// credential chain found none: the same sentinel as on Bigtable);
// ProvisionedThroughputExceeded, Throttling,
// RequestLimitExceeded and LimitExceeded ErrThrottled; InternalServerError,
// ServiceUnavailable, other 5xx answers and lost connections
// ErrUnavailable; Validation (an item, key or request too large among
// them), Serialization, ItemCollectionSizeLimitExceeded, 413 and any other
// 4xx answer ErrInvalidArgument; UnknownOperation ErrUnimplemented. Only
// ErrThrottled and ErrUnavailable are retried (the batch calls' own
// retries included). Messages name the DynamoDB call and quote at most the
// start of a key (tablekit.PrimaryKey.String); the Client adds the
// operation and the table.
package awsdynamodb
