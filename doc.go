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
// Behaviour SPEC.md leaves open, pinned here: a filter is evaluated on the
// cells a read selects (visibility, time range and MaxVersions applied)
// before the projection; a row that exists but has nothing selected is
// found, with no columns; raising MaxVersions or TTL with UpdateTable may or
// may not bring back versions that were invisible before (backends collect
// lazily), so programs must not rely on either.
//
// Where this package departs from SPEC.md's letter, on purpose: an
// Increment is written at now or, when the column's latest visible version
// is later than now, at that version (replacing it), so that concurrent
// increments whose clocks were read in one order and committed in the other
// lose nothing (SPEC §8 says "at now"). SPEC §6's worked example gives
// version 1468944000000 as 2016-07-20 00:00:00 UTC; that number is
// 00:00 at UTC+8 (Tablestore's documentation uses Beijing time), so the
// conformance suite checks the example in both readings.
package tablekit
