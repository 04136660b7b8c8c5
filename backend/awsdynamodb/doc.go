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
//	.r   N  revision: random, replaced by every write
//	.m   BOOL  true on a key-only row (PutRow with no columns)
//	.x   N  epoch seconds at which every cell has expired: max over cells of
//	        floor(version/1000) + TTL; only when TTL ≠ -1, never on a
//	        key-only row. Native TTL is enabled on it where the server
//	        supports it, to reclaim space only.
//	<column>  one attribute per column holding all its versions, newest
//	        first, each with its type (Integer and Double are both N in
//	        DynamoDB, so the type is stored, not inferred):
//	    S   when no version is Binary: readable text, per version
//	        "<version ms> <type><length>:<payload>;" with type S (the
//	        string), I (decimal), D (Go's shortest 'g' form, which
//	        round-trips every float64, -0 and 1e300 included — DynamoDB's N
//	        could not) or B (t/f), e.g. "1700000000000 I1:3;".
//	    B   when a version is Binary: byte 0x01, then per version an 8-byte
//	        big-endian version, 1 type byte (1 String, 2 Integer, 3 Double,
//	        4 Boolean, 5 Binary) and the value (Integer/Double 8 bytes big
//	        endian, Boolean 1 byte, String/Binary a uvarint length and the
//	        bytes). (Text is the default because dynalite handles base64 B
//	        attributes markedly slower than S.)
//
// Reserved attributes start with '.', which no column name can contain.
// Example: table "orders", key (customer String, id Integer), N = 8, row
// ("c42", 7) with score = Integer 3 at version 1700000000000 and an older
// version String "héllo":
//
//	.s = 3                      (FNV-1a-64 of 63 34 32 00 01, mod 8)
//	.k = 63 34 32 00 01 3d 30 30 … 30 37   ("c42", then "=" and 19 digits)
//	.r = 3879871239910284411
//	score = "1700000000000 I1:3;1699999999000 S6:héllo;"
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
// maxVersionOffset, shards, nativeTTL. CreateTable claims the name there with
// a conditional put, then creates the DynamoDB table and waits for ACTIVE;
// DeleteTable removes the item, then the DynamoDB table. The backend caches
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
// Native TTL: dynalite answers UpdateTimeToLive with
// UnknownOperationException; the backend then records nativeTTL=false (see
// [Backend.TableLayout]) and relies on read-time hiding alone. UpdateTable
// changes only the metadata item; raising TTL may bring back rows whose
// cells had expired unless native TTL already deleted them (SPEC leaves this
// open).
package awsdynamodb
