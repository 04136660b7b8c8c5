// Package localengine is for unit tests, and for programs that want
// tablekit tables in memory: tablekit's fast in-memory engine, every table
// in memory, rows in ordered maps keyed by the order-preserving key
// encoding, each row's semantics from package rowmodel. It is what unit
// tests use instead of a cloud and the store behind the Tablestore test
// server; the conformance suite's differential test checks it against a
// plain reference of its own, like every other backend. Its
// performance against the bare ordered map it is built on, and what keeps
// it there, is in BENCHMARKS.md beside this file.
//
// # Opening
//
//	db := tablekit.NewClient(localengine.New())
//	defer db.Close()
//
// Importing the package registers the mem:// URL scheme ([Scheme]):
// tablekit.Open(ctx, "mem://") opens a new, empty engine, and "mem://NAME"
// the engine of that name shared within the process.
//
// # Native access
//
// There is no native client: tablekit.Client.As offers the *Engine itself
// (a **Engine target), for example to reach the engine behind a
// "mem://NAME" URL.
//
// # Storage layout
//
// A table is an ordered list of spans, each a B-tree (tidwall/btree) of the
// entries of one contiguous range of keys, ordered by the key's encoding
// (backend/codec's EncodeKey, whose byte order is SPEC's key order); a
// span that grows beyond 2,048 entries is split at its median, and one
// that deletes leave empty, or small beside a small neighbour, is merged
// into it (span.go has the rules). Each entry is stored by value in the
// tree's nodes: the row packed into one
// immutable string (the encoded key, the key's values, a small header per
// cell, then the names and value bytes; row.go has the layout) and the few
// words a read needs first (where the parts start, the number of cells, the
// key-only marker, the row's generation and the rowmodel.Shape of its
// cells), and the 8 bytes of the key past the common prefix of its span's
// keys, which the B-tree compares before the keys (so a walk down it reads
// a row's key, behind the row's pointer, only where those bytes tie;
// span.go). So a row is one allocation holding no pointers, and the garbage
// collector follows one pointer per row. It keeps no part of a request: a
// stored row's key and cells are copies.
//
// Updates in place. A stored row is never written: every write stores a
// new packed row in the entry's place (copy-on-write), under its span's
// lock. An update that only replaces cells (rowmodel.InPlace: the table
// keeps one version of a column, every cell of the row is visible, and the
// update Puts columns the row has, at versions no earlier than theirs:
// YCSB's update) is not decoded, merged and packed again: the new row is
// the old one's bytes copied in runs, with the changed cells' headers and
// bytes written anew (update.go), and it is stored along the B-tree path
// its read of the old row took (one walk). Any other update takes
// rowmodel's Update. Either way a reader sees a row whole, never half
// updated (SPEC §11): it copies the entry under the span's lock shared and
// decodes the immutable string it holds after letting the lock go, and the
// cells it returned keep viewing that string, whatever later writes store. Nothing is written anywhere else,
// and everything is gone when the process ends or Close is called.
//
// # Semantics
//
// It is safe for concurrent use; each single-row operation is atomic and
// linearizable. A table has a lock for its options and its list of spans
// (an RWMutex that readers share, and 16 writer slots of which a writer
// shares one, picked at random; held alone, all of them), an RWMutex per
// span for the span's B-tree, and 64 row locks (stripes, by a hash of the
// key). Reads share the table's lock and their span's, so
// they run in parallel on as many cores as there are. A write holds its
// row's stripe and the table's lock, shared, from reading the table's
// options (and the stored row, when the write depends on it: an update or
// a condition) to storing the new one; it builds the new row (rowmodel's
// rules, then packing) holding no other lock, and takes its span's lock
// alone only to store the row and append its change record. A write that
// reads its row (an update, a condition) holds the stripe alone, so no
// other write of the row comes between its read and its store; an
// unconditional put or delete, which reads nothing, shares it with others
// of its kind. So writes to one row apply one at a time, in the order the
// change feed records them;
// writes to rows of different stripes build their rows in parallel, and
// writers of different spans store them in parallel too, sharing no lock
// word (unless they picked the same writer slot). A write takes effect, for
// readers and the feed alike, when it is stored. The table's lock is taken
// alone only by what changes the table as a whole: UpdateTable, an atomic
// write's store, the change feed's settings and reads, and the split or
// merge of a span (by the writer that made it too large or small, after
// its write). A range read holds the table's lock shared for at most a
// batch of entries (a few microseconds of map steps) at a time, taking
// each span's lock shared for its part of the batch, and evaluates rows,
// filters included, unlocked: however long a scan is, or however slow its
// filter, a writer waits at most for one batch's walk of its span. Each batch starts
// after the last key the one before took, so a range read returns every
// row that exists throughout it, in order and once, however spans split
// or merge meanwhile; it is consistent per row, not across rows (SPEC
// §11). An atomic write (SPEC §13) holds the stripes of all its rows while
// it checks and builds them, and stores them all in one hold of the
// table's lock, taken alone, so a reader sees all of them or none. It
// starts no goroutines, reads no clock (time comes with each request, from the
// client's Clock), and holds nothing after Close.
//
// Everything it returns is the caller's: rows, key parts and cells are new
// slices, sharing only immutable strings with the store (names and String
// and Binary values view the packed rows; except what ScanRange lends,
// read-only, as tablekit.RangeScanner allows). Its metadata is
// authoritative: a request built from a table since deleted and created
// again is refused as stale (the Client then retries against the new
// table), and writes use the table's current options, never the request's
// cached copy (a write whose table's options change while it builds its
// row is built again under the new ones).
//
// Change feed. The engine has one (tablekit.ChangeFeeder, SPEC §15): a
// table's records are appended to an in-memory log in the same critical
// section as the write's store (under its span's lock and a small mutex
// of the log's own, or the table's lock taken alone), so the feed and the
// table never disagree. It is a tablekit.FeedWaiter: each record
// closes the channel a caught-up follower waits on (FeedChanged), so
// Table.FollowChangeFeed reads a record when it commits instead of after
// its poll. Each period the feed is enabled is one shard. Records
// are kept for the retention (24-168 h, by commit time at the requests'
// clock), trimmed on later writes and reads.
//
// Auto-increment key columns (SPEC §14): each table keeps, per partition
// key, the greatest value its auto-increment column has held (assigned,
// or written with a real key); a write with tablekit.AutoIncrement gets
// that plus one, under a small lock of the counters' own, then takes its
// row's stripe and is assigned again should a real-key write have stored
// that row meanwhile, so its row is always new (autoinc.go has the
// rules). The counters are in memory and go with the table.
//
// Secondary indexes (SPEC §16, kept by the Client): the engine is a
// tablekit.IndexWriter, so a write of an indexed table and its index
// entries are one call (index.go): the entries are stored first, each
// under its own stripe, then the row, so a reader that sees the row sees
// its entries; no lock is held across tables. A table with an
// auto-increment key column may be indexed: a write with
// tablekit.AutoIncrement is assigned its value first, its entries are
// stored under it (tablekit.AssignEntries), then the row, to an absent
// row (assigned again, entries again, should a real-key write have taken
// it: the first entries are extra, which reads ignore). An index read
// reads its page's rows in one BatchGetRow (tablekit.BatchReader,
// batchget.go): one lock per table's run of rows, the rows evaluated
// unlocked and returned in one slice of rows, one of key parts and one of
// cells.
//
// # Limits
//
// None beyond SPEC's: the limit is the process's memory, which holds every
// row (and every version MaxVersions keeps) for as long as the engine
// lives. A table's change feed keeps at most [MaxFeedRecords] records
// (about 200 bytes each plus their cells) whatever their age: beyond it the
// oldest go first, before the retention, and a reader behind them gets
// tablekit.ErrTrimmed.
//
// # Errors
//
// Errors are *tablekit.Error with the portable codes (SPEC §12), among
// them ErrTableNotFound, ErrAlreadyExists, ErrConditionFailed, an error
// matching driver.ErrStaleMeta for a request built from a table since
// re-created (the Client retries it), and ErrUnavailable after Close.
// Nothing is ever throttled.
package localengine
