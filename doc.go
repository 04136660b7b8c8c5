// Package tablekit gives Go programs one API for Tablestore-style
// wide-column tables on Google Bigtable, Alibaba Cloud Tablestore, AWS
// DynamoDB and an embedded store, behaving the same on each (SPEC.md,
// checked by package conformance); [Backend] is for adapter authors, who
// build on packages rowmodel, backend/driver and backend/codec.
//
// A program opens a backend by URL and uses a [Client]:
//
//	db, err := tablekit.Open(ctx, os.Getenv(tablekit.EnvURL)) // mem://, file:///dir, bigtable://…, dynamodb://…, tablestore://…
//	orders := db.Table("orders")
//	err = orders.PutRow(ctx, key, cols, tablekit.ExpectNotExist)
//	for row, err := range orders.PrefixRows(ctx, nil) { … } // the whole table
//
// A URL scheme works once its package is imported (localengine: mem://,
// fileengine: file://, backend/...: the clouds; package all: every one).
// Package typed maps structs to rows; package faults injects failures.
// Every error is an [*Error] whose Code is a portable sentinel. Clients
// cache table metadata; a stale one never corrupts a changed table (SPEC §3).
//
// Requests carry the client clock's now, so a [ManualClock] governs TTL and
// versions, except on Tablestore, which keeps time on the server (give its
// emulator the same clock: tsemu.Options.Clock; on the real service a
// ManualClock only stamps the versions written).
//
// Auto-increment keys (SPEC §14): a put whose key holds [AutoIncrement]
// gets its value from the store ([ReturnKey] says which). Each such write
// gets its own value, also within one [Table.AtomicWrite], so an order and
// its lines that must share one number are written in two steps: the
// order alone with AutoIncrement (a draft), then one AtomicWrite that
// marks it placed and puts the lines under the returned key (the example
// of [Table.AtomicWrite]).
//
// A change feed (SPEC §15, [Table.EnableChangeFeed], on backends whose
// [Capabilities] say ChangeFeed) yields every committed write as a
// [ChangeRecord] ([Table.ReadShard], [Table.FollowChangeFeed]).
//
// Secondary indexes (SPEC §16, [TableMeta].Indexes, [Client.AddIndex],
// [Table.Index]) are kept by the Client on every backend, consistent with
// the table per row: entries are written before their row and verified
// against it when read, so a crash, or a row leaving an index value,
// leaves extra entries (reads remove those they meet once past a grace
// period, [Client.Reindex] the rest), never a wrong read. The storage layout, the argument for
// the races (a delete revealing an older value; removing an entry while
// another writer re-puts it) and the one known limit are the notes at the
// top of index.go.
package tablekit
