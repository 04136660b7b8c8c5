// Package tablekit is a portable data-access layer for Tablestore-style
// wide-column tables. One typed API — primary keys of 1–4 typed columns,
// versioned attribute columns, MaxVersions, TTL, the max-version-offset
// write window, conditions, filters, ordered range reads and batches — runs
// unchanged on Google Bigtable, Alibaba Cloud Tablestore, AWS DynamoDB and an
// embedded local engine.
//
// The contract is SPEC.md; package conformance turns it into tests that every
// backend runs. The shape:
//
//   - [Client] and [Table] are what programs use. The client validates
//     every request once (names, types, sizes, the version window), fills in
//     defaults, and wraps every error in an [*Error] whose Code is a portable
//     sentinel ([ErrInvalidArgument], [ErrConditionFailed], ...).
//   - [Backend] is what adapters implement: package localengine (in memory)
//     and the packages under backend/. Its doc is the contract, method by
//     method. Requests reach a backend already validated and carrying the
//     client clock's now, so a [ManualClock] governs TTL and versions on
//     every backend alike. [Client.As] reaches a backend's native client.
//   - Adapter authors build on package rowmodel (SPEC's single-row rules:
//     visibility, the write window, filters, what each write leaves) and
//     package backend/driver (error wrapping, stale metadata, backoff,
//     bounded parallelism); programs never need either.
//
// Behaviour SPEC.md pins that programs notice: a filter is evaluated on the
// cells a read selects (visibility, time range and MaxVersions applied)
// before the projection; a row that exists but has nothing selected is
// found, with no columns; an Increment is written at now or, when the
// column's latest visible version is later than now, at that version, so
// concurrent increments lose nothing; raising MaxVersions or TTL with
// UpdateTable may or may not bring back versions that were invisible before
// (backends collect lazily), so programs must not rely on either.
//
// # Many processes, one store
//
// A Client caches each table's schema and options. A table deleted and
// created again under the same name gets a new [TableMeta.Incarnation], and
// every option change a new [TableMeta.Generation]; backends refuse requests
// built from an older incarnation, and never let a write made under older
// options remove versions written under newer ones. The Client then reads
// the table again and retries, validating against the new schema, so one
// stale process can never corrupt a table (SPEC §3).
package tablekit
