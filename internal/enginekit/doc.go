// Package enginekit is for the module's own storage engines (localengine,
// fileengine), never for programs or adapter authors (it is internal): the
// mechanics both engines share that are no part of the adapter contract, so
// that they are written once without widening backend/driver's public page.
//
// It holds two things, one file each:
//
//   - stripes.go: [LockStripes], the ordered locking of the row locks of a
//     multi-row write (an atomic write), so that two never deadlock.
//   - checkpoint.go: [SeqCheckpoint] and [ParseSeqCheckpoint], the
//     "shard/seq" change-feed checkpoint of an engine whose shards number
//     their records.
package enginekit
