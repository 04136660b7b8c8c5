// Package testkit is for tablekit's own tests and benchmarks, never for
// programs or adapter authors: its packages are never linked into a
// library build, because only _test.go files (and test-helper packages
// that only _test.go files import) import them. TestNeverShipped checks
// that with go list, and TestReadmeLayout that the README's layout
// section lists every package of the module.
//
//   - batchcheck: the test of an engine's BatchGetRow against its GetRow.
//   - benchstat: what interleaved benchmarks measure and report with
//     (Median, ProcessCPU).
//   - dynalitetest: starts dynalite, the DynamoDB emulator, for tests.
//   - feedbench: the change-feed benchmark (write cost, read rate) every
//     backend with a feed runs.
//   - emuproc: what the emulator harnesses share (free port, process
//     group, output, readiness probe, the CI=true rule).
//   - mototest: starts moto's server, the DynamoDB emulator with
//     transactions, for tests.
//   - rangebench: the filtered-range benchmark every backend runs.
//   - urltest: the checks the URL openers' tests share.
//
// The shared floor that library code uses is internal/base.
package testkit
