// Package tablekit is for Go programs that keep Tablestore-style
// wide-column tables and want one API on Google Bigtable, Alibaba Cloud
// Tablestore, AWS DynamoDB and an embedded store; its [Backend] contract is
// for the authors of those stores' adapters. Typed keys, versioned cells,
// TTL, conditions, filters, ordered ranges and batches behave the same on
// each (SPEC.md; package conformance tests every backend against it).
//
// A program opens a backend by URL and uses a [Client]:
//
//	db, err := tablekit.Open(ctx, os.Getenv(tablekit.EnvURL)) // mem://, file:///dir, bigtable://…, dynamodb://…, tablestore://…
//	orders := db.Table("orders")
//	err = orders.PutRow(ctx, key, cols, tablekit.ExpectNotExist)
//	for row, err := range orders.PrefixRows(ctx, nil) { … } // the whole table
//
// A URL scheme is available once its package is imported (localengine for
// mem://, fileengine for file://, the packages under backend/ for the
// clouds; package all imports every one). Package typed maps tagged
// structs to rows, and package faults injects failures for tests. [Client]
// and [Table] validate every request once, fill in defaults, and wrap every
// error in an [*Error] whose Code is a portable sentinel. Adapters build on
// packages rowmodel and backend/driver, which programs never need.
//
// Requests carry the client clock's now, so a [ManualClock] governs TTL and
// versions on the local and file engines, Bigtable and DynamoDB. Tablestore
// evaluates time on the server: give its emulator the same clock
// (tstest.Options.Clock, or tablestore-emulator -clock manual with
// tstest.AdminClock); on the real service a ManualClock only stamps the
// versions written.
//
// A table may keep a change feed (SPEC §15; [Table.EnableChangeFeed]):
// every committed write as a [ChangeRecord], read per shard from opaque
// [Checkpoint]s ([Table.ReadShard]) or all shards in order
// ([Table.FollowChangeFeed]), on the backends whose [Capabilities] say
// ChangeFeed (the local and file engines); the others refuse it with
// [ErrUnimplemented].
//
// SPEC.md pins what programs notice: a filter sees the selected cells before
// the projection; a row with nothing selected is found, without columns;
// concurrent Increments lose nothing; a stale Client never corrupts a table
// (§3).
package tablekit
