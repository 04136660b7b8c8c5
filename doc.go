// Package tablekit is for Go programs that keep Tablestore-style
// wide-column tables and want one API on Google Bigtable, Alibaba Cloud
// Tablestore, AWS DynamoDB and an embedded store; its [Backend] contract is
// for the authors of those stores' adapters. Primary keys of 1–4 typed
// columns, versioned attribute columns, MaxVersions, TTL, the
// max-version-offset write window, conditions, filters, ordered range reads
// and batches behave the same on each (SPEC.md; package conformance tests
// every backend against it).
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
// structs to rows (typed.Of[Order](orders)), and package faults injects
// failures for tests.
//
// The shape:
//
//   - [Client] and [Table] validate every request once (names, types,
//     sizes, the version window), fill in defaults, and wrap every error in
//     an [*Error] whose Code is a portable sentinel ([ErrInvalidArgument],
//     [ErrConditionFailed], ...). [Table.PrefixRange] gives the bounds of a
//     key prefix; the empty prefix is the whole table, so no bound needs
//     InfMin or InfMax spelled per key column.
//   - [Backend] is what adapters implement; its doc is the contract, method
//     by method, including how optional capabilities work ([ErrSkip],
//     [Capabilities]). Requests reach a backend validated and carrying the
//     client clock's now, so a [ManualClock] governs TTL and versions on
//     every backend alike. [Client.As] reaches a backend's native client.
//   - Adapter authors build on package rowmodel (SPEC's single-row rules)
//     and package backend/driver (errors, URL parameters, backoff); programs
//     never need either.
//
// Behaviour SPEC.md pins that programs notice: a filter is evaluated on the
// cells a read selects (visibility, time range and MaxVersions applied)
// before the projection; a row that exists but has nothing selected is
// found, with no columns; an Increment is written at now or, when the
// column's latest visible version is later, at that version, so concurrent
// increments lose nothing; raising MaxVersions or TTL may or may not bring
// back versions that were invisible before, so programs must not rely on
// either.
//
// # Many processes, one store
//
// A Client caches each table's schema and options. A table deleted and
// created again gets a new [TableMeta.Incarnation], and every option change
// a new [TableMeta.Generation]; backends refuse requests built from older
// ones, and the Client reads the table again and retries, validating
// against the new schema, so one stale process can never corrupt a table
// (SPEC §3).
package tablekit
