// Package fileengine is for programs that want durable tablekit tables on
// one machine, with no server to run: a tablekit.Backend with the local
// engine's semantics (package localengine gives the same answers to the
// same requests) kept in a directory by pebble, CockroachDB's
// log-structured key-value store. Its performance against pebble alone
// doing the same key-value work is in BENCHMARKS.md beside this file.
//
//	eng, err := fileengine.Open("/var/lib/myapp/tables", nil)
//	if err != nil { ... }
//	db := tablekit.NewClient(eng) // db.Close closes eng
//
// # Opening
//
// [Open] opens (or creates) the store in a directory; importing the package
// registers the file:// URL scheme ([Scheme]), so tablekit.Open(ctx,
// "file:///var/lib/myapp/tables") opens the same engine.
//
// One process opens a directory at a time: pebble locks it, and a second
// Open, from this process or another, fails with an error matching
// [ErrLocked] and tablekit.ErrUnavailable that names the directory. Open
// of a path that is a file, or of a directory the process may not write,
// fails with a typed error naming the path (tablekit.ErrInvalidArgument,
// tablekit.ErrPermissionDenied). Close flushes the memtable and releases
// the lock; calls after Close fail with tablekit.ErrUnavailable and never
// panic.
//
// # Native access
//
// tablekit.Client.As offers the engine's *pebble.DB (a **pebble.DB
// target: for metrics and tools; writing to it bypasses the engine's
// rules) and the *Engine itself (a **Engine target).
//
// [Engine.Checkpoint] writes an online, consistent copy of the store into
// another directory (hard links where it can), which Open opens: a backup
// taken while writes go on.
//
// # Storage layout
//
// Rows' semantics come from package rowmodel and keys are encoded by
// backend/codec's order-preserving key encoding, exactly as in the local
// engine. Each row is one pebble record holding its cells (with types and
// versions), its key-only marker and the options Generation it was written
// under; each table's metadata (key schema, options, Incarnation,
// Generation) is one record under a separate prefix. A table's rows are
// keyed under its Incarnation (or, for a table created without one, an id
// of its own), so DeleteTable is one range deletion committed together with
// the removal of the metadata, and a table created again never sees the old
// rows. CreateTable stores the Incarnation it is given and DescribeTable
// reports it, as the Backend contract says. The engine's metadata is
// authoritative: a request built from a table since deleted and created
// again is refused as stale (the Client then retries against the new
// table), and writes use the table's stored options and Generation, never
// the request's cached copy.
//
// Keys and values: a row is keyed 'r', the length of its table's rows id,
// the id, then backend/codec's EncodeKey of its primary key, so a table's
// rows are contiguous and in SPEC's key order; its value is one record
// (format byte, flags, generation, then per cell its name, its value as
// backend/codec's AppendValue encodes it, and its version). codec.go has
// the byte-level description; the format is stored on disk and never
// changes (a new one would get a new format byte).
//
// # Semantics
//
// Durability. By default every acknowledged write is durable: each Write
// (and each BatchWriteRow call, whose rows are committed as one pebble
// batch) is committed with pebble.Sync, and returns only once its
// write-ahead-log record is on stable storage. Concurrent commits are
// grouped by pebble's WAL: writers that commit at the same time share one
// fsync, so throughput grows with the number of concurrent writers while
// each one still waits for its own sync. A crash (of the process or the
// machine) at any moment loses nothing that was acknowledged and leaves no
// half-applied row: each write is one atomic pebble batch. A read may see a
// write whose commit is still waiting for its sync; if the machine crashes
// before the sync, that write, never acknowledged, may be lost.
//
// [Options].NoSync relaxes this for the machine, not for the process: a
// write is acknowledged once its WAL record is written to the log file
// (the operating system holds it) but without an fsync of the log, so the
// death of the process alone (SIGKILL, a panic, an OOM kill) loses
// nothing acknowledged, while a crash of the machine (or of the operating
// system, or a power loss) may lose the last acknowledged writes; it
// still never tears a row, and what survives is a prefix of the commit
// order. Concurrent commits share one write of the log, as they share a
// sync by default. (pebble's own pebble.NoSync acknowledges a commit
// while its record may still be in pebble's buffer, so a killed process
// lost acknowledged writes: nosync.go says how the engine avoids it.)
// TestCrash kills writing processes in both modes and checks that every
// acknowledged write is there.
//
// Concurrency. An Engine is safe for concurrent use, and every single-row
// operation is atomic and linearizable. Each table has a RWMutex that reads
// and writes share and that UpdateTable and DeleteTable take alone; a write
// also holds one of a fixed set of striped per-row mutexes across its
// read-modify-write and its commit, so that writes to one row are applied
// one at a time while writes to different rows commit concurrently (and
// share WAL syncs). Reads use pebble's consistent point reads and
// iterators, which see every commit that completed before they started; a
// range page is read from one consistent snapshot.
//
// The engine starts no goroutines of its own (pebble runs its flushes and
// compactions in the background) and reads no clock: time comes with each
// request, from the client's Clock.
//
// Change feed. The engine has one (tablekit.ChangeFeeder, SPEC §15; see
// feed.go for the keys): a table's change record is written in the same
// pebble batch as its row, so after a crash the feed and the table agree,
// and a checkpoint stays valid across Close and Open. Each period the feed
// is enabled is one shard (the next one's parent is the previous one);
// records are kept on disk for the retention (24-168 h, by commit time at
// the requests' clock) and deleted lazily, at most once a minute, by the
// reads of the feed and by SetChangeFeed; nothing of the feed is held in
// memory but its state. It is a tablekit.FeedWaiter: a write that
// recorded a change wakes a caught-up follower (FeedChanged) once its batch
// has committed, so Table.FollowChangeFeed reads the record then instead
// of after its poll.
//
// Secondary indexes (SPEC §16, kept by the Client): the engine is a
// tablekit.IndexWriter, so a write of an indexed table and its index
// entries are one pebble batch with one sync (index.go): after a crash
// the row is stored only with its entries (crash_index_test.go kills
// writing processes and checks it), and an indexed put costs one sync,
// not two. A table with an auto-increment key column may be indexed: a
// write with tablekit.AutoIncrement is assigned its value under the same
// locks, and the row, its counter key and its entries, under that value
// (tablekit.AssignEntries), are the one batch (index.go,
// TestAutoIncrementIndexed). It is a tablekit.BatchReader: BatchGetRow reads its rows
// through one pebble iterator, in their keys' order (batchget.go), which is
// how an index read reads the rows of its page of entries.
//
// Auto-increment key columns (SPEC §14): a write's value is the greatest
// its partition key has held plus one; a counter key is written in the
// same pebble batch as the row, so after a crash or Close and Open no
// value is handed out twice (see autoinc.go; TestAutoIncrementCrash kills
// writing processes and checks it). The engine keeps the counter of each
// partition key it has written such a row in, in memory, while it is open.
//
// # Limits
//
// None beyond SPEC's but the disk's: a store holds what its file system
// has room for (see Errors for a full disk), and one process opens a
// directory at a time.
//
// # Errors
//
// A write that the WAL cannot take (a full disk, an I/O error during the
// write or the sync, a file system remounted read-only) is fatal to
// pebble, which cannot tell what reached the log and leaves its commit
// pipeline stuck; it reports it through its logger's Fatalf. The engine
// contains it: that write fails with a typed error (tablekit.ErrUnavailable,
// or tablekit.ErrPermissionDenied for a read-only file system; errors.Is
// finds the cause, such as syscall.ENOSPC), and from then on every write
// fails at once with the same error, never reaching pebble, while reads go
// on; Close returns that error too. The next Open replays the log up to
// its last complete record, which holds every acknowledged write
// (TestDiskFull checks this with a file-size limit, and on a small file
// system when one is given). Open itself refuses, with an error matching
// syscall.ENOSPC and tablekit.ErrUnavailable, a store whose file system
// has less free space than its logs to replay and 1 MiB: pebble's Open
// would retry the flush of the replayed log for ever. Errors pebble meets
// in its own background work (flushes, compactions) are retried by pebble
// and passed to Options.Logf, not returned by a call.
//
// Corruption that pebble's checksums detect (in a table file or the WAL)
// is reported as an error matching [ErrCorrupt] (with code
// tablekit.ErrUnavailable), on Open or on the read that meets it; it is
// never returned as data.
package fileengine
