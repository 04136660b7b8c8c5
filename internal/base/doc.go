// Package base is for tablekit's own packages, never for programs or
// adapter authors (it is internal): it is the floor below the root package
// tablekit, the little that the root, backend/driver, rowmodel, the
// Tablestore emulator and the CLI must share and that cannot live in the
// root without an import cycle (or, for the CLI, be exported by it). It imports nothing of tablekit's (the root imports it,
// so the compiler refuses the other direction).
//
// It holds six things, one file each:
//
//   - par.go: [Parallel], bounded parallel work (driver.Parallel and the
//     Client's batch fallback).
//   - retryhook.go: [RetryKey], [RetryReporter] and [ReportRetry], which
//     carry an adapter's back-off waits to the Client operation's telemetry.
//   - rules.go: SPEC's arithmetic on plain integers ([ValidName],
//     [Seconds], [Visible], [OldestVisible], [CheckVersion]), which the root
//     validates with and rowmodel exports to adapters.
//   - secret.go: [SecretName], the credential-name rule behind the root's
//     refusal of credentials in URLs and the CLI's redaction of them.
//   - spread.go: [Spread] (with [FNV1a64], [Mix64] and [Reduce]), the one
//     hash of keys to buckets: the DynamoDB adapter's shard placement
//     (part of its storage format), the engines' lock stripes and the
//     fault injector's draws.
//   - stale.go: [ErrStaleMeta], which driver exports as ErrStaleMeta and
//     the Client retries on.
//
// What only tests use lives in internal/testkit, above everything.
package base
