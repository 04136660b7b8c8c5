// Package awsdynamodb is the tablekit backend for Amazon DynamoDB (and
// DynamoDB-compatible servers such as dynalite), built on
// github.com/aws/aws-sdk-go-v2/service/dynamodb.
//
//	cfg, _ := config.LoadDefaultConfig(ctx)
//	be, err := awsdynamodb.Open(ctx, cfg)                      // or awsdynamodb.New(existingClient)
//	db := tablekit.NewClient(be)
//
// [Backend.Client] returns the native client; every error wraps the SDK's
// own, so errors.As(err, &rnf) with rnf a *types.ResourceNotFoundException, and
// the like, work through *tablekit.Error.Err.
//
// # How a table looks in DynamoDB
//
// Each portable table is one DynamoDB table (PAY_PER_REQUEST). Its name is
// the portable name behind an optional prefix ([WithTablePrefix]); names
// shorter than 3 bytes are padded with '-' ("t" → "t--"), names longer than
// 255 are cut and end in '-' and 16 hex digits of their SHA-256. Portable
// names never contain '-' or '.', so the mapping is injective; ListTables
// and DescribeTable report the portable name.
//
// DynamoDB hashes partition keys, so rows of different partition keys come
// back in no order. SPEC's ordered GetRange over the whole table uses write
// sharding: every table has a fixed number N of shard keys, chosen at
// CreateTable ([WithShards], default 8) and recorded in its metadata. An
// item is
//
//	.s   N  partition key: shard = FNV-1a-64(keycodec(first key column)) mod N
//	.k   B  sort key: the keycodec encoding of the whole primary key
//	        (order-preserving; Strings stay readable: "a" → 61 00 01)
//	.r   S  revision, on every item: 11 random characters (8 random
//	        bytes, base64url), replaced by every write; then, when the row
//	        has text cells (below), a space and their base version in
//	        decimal: the version most of them share (the newest of the most
//	        frequent), which they then leave out. Every cell of a write that
//	        sets no version has the write's Now, so usually no text cell
//	        carries a version.
//	.m   BOOL  true on a key-only row (PutRow with no columns)
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
// item has no other attributes (one that does is reported as malformed, as
// ErrUnavailable), and .c and .b never hold the same column.
// Example: table "orders", key (customer String, id Integer), N = 8, row
// ("c42", 7) with note = String "hi" and score = Integer 3, both at version
// 1700000000000, an older version of score, String "héllo" at
// 1699999999000, and blob = Binary ab at 1700000000000:
//
//	.s = 3                      (FNV-1a-64 of 63 34 32 00 01, mod 8)
//	.k = 63 34 32 00 01 3d 30 30 … 30 37   ("c42", then "=" and 19 digits)
//	.r = "q3Lh0v7T4ZA 1700000000000"
//	.c = "note~2Shiscore~1I3~6@1699999999000Shéllo"
//	.b = 02 04 62 6c 6f 62 01 00 00 01 8b cf e5 68 00 05 01 ab
//
// A row is thus at most seven attributes, however many columns it has.
// That is the layout's main point: DynamoDB's JSON protocol, the SDK's
// decoder and dynalite all pay per attribute (a JSON object each, an
// AttributeValue and a map entry each), so a row of ten columns as ten
// attributes took 25–30% longer to read, on dynalite, than the same bytes
// in one (see Performance). Conditions and filters are evaluated by the
// adapter on the decoded row (see Semantics), never by DynamoDB
// expressions on columns, so they lose nothing by it; what is given up is
// a ProjectionExpression fetching only some columns of a wide row, which
// the adapter never used (a read's projection applies after decoding).
// This is the only layout: nothing was released before it, so the adapter
// reads no other.
//
// All rows of one partition-key value live in one shard and are contiguous
// in sort-key order, so a range whose bounds pin the first key column to one
// value is a single Query on one shard, with sort-key bounds from
// keycodec.Bound, reading only that value's items. Any other range is an
// N-way merge of parallel Queries, one per shard, streamed page by page
// (small first pages, doubling, prefetched when a buffer runs low): a
// GetRange call reads the Limit+1 items it needs plus what the shards' first
// pages over-fetch (about twice a shard's share, at least 16 items each),
// never the whole range. More shards spread writes
// (each DynamoDB partition key takes about 1000 WCU/3000 RCU) but make
// cross-partition ranges cost N Queries per page; see the benchmarks.
//
// # Metadata
//
// Schemas and options live in one metadata table (default
// "<prefix>tablekit.meta", hash key "name" S), one item per portable table:
// name, native, key (list of {name, type}), ttl, maxVersions,
// maxVersionOffset, shards, nativeTTL (whether DynamoDB's TTL is on for the
// table). CreateTable claims the name there with a conditional put, then
// creates the DynamoDB table and waits for ACTIVE; DeleteTable removes the
// item, then the DynamoDB table.
//
// CreateTable never deletes a DynamoDB table. If one of the native name
// already exists (the account's own table of that name, or one left by a
// DeleteTable interrupted after removing the item), CreateTable fails with
// ErrAlreadyExists naming the DynamoDB table, releases the name in the
// metadata table and leaves the table and its items alone; delete it by
// hand or pick another [WithTablePrefix]. A table still being deleted
// (status DELETING) is waited for. The backend caches
// each table's shard count (it never changes); a table deleted and
// re-created with another N by a different process is not noticed until this
// backend sees ErrTableNotFound.
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
// DeleteItem. Every other write (UpdateRow, conditions, increments) is
// optimistic: a consistent GetItem, rowmodel.Apply, then a PutItem or
// DeleteItem conditioned on the revision read (or on the item's absence),
// retried with jittered backoff when another writer got there first. Each
// single-row operation is therefore atomic and linearizable and no
// concurrent update is lost. No DynamoDB transactions are used (dynalite has
// none).
//
// Limits DynamoDB adds to SPEC's: an item is at most 400 KB (attribute names
// included) and a sort key at most 1024 bytes. A write whose item or key
// would exceed them fails with ErrInvalidArgument naming the table, the key
// and the limit, before anything is written; a read of such a key finds no row.
//
// BatchGetRow groups keys per table in BatchGetItem calls of at most 100;
// BatchWriteRow sends unconditional puts and deletes in BatchWriteItem calls
// of at most 25 and every other write through the optimistic path. The calls
// run in parallel ([WithConcurrency], default 8); UnprocessedKeys and
// UnprocessedItems are retried with capped, jittered exponential backoff
// until done or the context ends, and calls that failed outright with a
// throttling, server or transport error (after the SDK's own retries) are
// sent again up to 8 times in a row without progress. Each row gets its own
// result.
//
// Stale options: a tablekit.Client caches each table's options (see
// tablekit.WithMetaCacheTTL, one minute by default) and passes them to the
// backend in every request. The optimistic path writes back the row
// rowmodel.Apply returns, which is trimmed under those options (req.Meta):
// cells expired under its TTL and versions beyond its MaxVersions are
// dropped from the stored item. So after another process raised MaxVersions
// or TTL, a Client whose cached options predate that, until its cache entry
// expires, removes on every UpdateRow, conditional or batch non-unconditional
// write the versions its old options hide and the new ones would show; they
// are gone for good. An unconditional PutRow replaces the row anyway, but
// it too stores only the given cells its old options keep (rowmodel.Put
// trims them the same way). Reads store nothing, so they lose nothing; they
// hide by the cached options until the entry expires.
// Raise MaxVersions and TTL through the Client that writes, or lower the
// cache TTL where other processes change them.
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
// the ttl and nativeTTL it read, so concurrent UpdateTables cannot combine
// into an unnoticed raise. The 86400 s margin in .x covers a writer's clock
// running behind DynamoDB's and the up to an hour DynamoDB takes to stop
// deleting after TTL is turned off, so no cell visible when TTL is raised is
// deleted. Raising TTL may still bring back cells that had already expired,
// as long as DynamoDB has not yet deleted their item (SPEC leaves this
// open).
//
// # Performance
//
// How measured: the committed BenchmarkPoint (bench_test.go) runs the
// adapter, through tablekit.Client, and the raw SDK doing the same work
// against the same dynalite in the same process: a 1 KB row (10 String
// columns of 100 bytes) written with one PutItem, read with one consistent
// GetItem, and all 100 rows of one partition key read with one consistent
// Query, the raw side on a plain table (pk S, sk N) holding the same rows.
// It warms every call shape up first, then alternates one adapter call and
// one raw call, swapping which goes first each iteration, times each call
// apart, and reports both means, their ratio ("ratio") and the ratio of
// the medians ("p50-ratio"). Figures from a shared 2-core VM under heavy
// load from other work (load average 5–7; Go 1.26, dynalite 4.0.0, Node
// 20), five rounds of
//
//	go test -c -o after.test ./backend/awsdynamodb/   # and before.test: the earlier layout, same benchmark
//	./after.test -test.run '^$' -test.bench BenchmarkPoint -test.benchtime 2s -test.count 2
//
// interleaved with the earlier layout, ten counts each, medians over the
// counts (range of p50-ratio in brackets):
//
//	             p50-ratio           ratio    earlier layout (p50, ratio)
//	Write        0.96 [0.92–0.97]    0.95     1.08, 1.07
//	Read         1.02 [1.00–1.04]    1.02     1.06, 1.07
//	Range100     0.96 [0.90–0.99]    0.97     1.49, 1.34
//
// The ratio of one count scatters more (Range100: 0.46–1.15): now and then
// reading a response fails with "use of closed network connection" and the
// SDK retries it after a jittered backoff of up to a second. That strikes
// raw and adapter calls alike (it happens in loops of raw Queries alone)
// and moves a 2-second count's mean by up to 50%; the median does not see
// it. The range read is cheaper than the raw one because the plain table
// stores each row as 12 attributes and the adapter as 4: the SDK decodes
// the adapter's response in about 30% less CPU, which pays for the
// adapter's own decoding and row building.
package awsdynamodb
