// Package tkycsb drives tablekit with YCSB, the Yahoo! Cloud Serving
// Benchmark, through github.com/pingcap/go-ycsb's core workloads.
//
// It lives in its own module (github.com/tablekit/tablekit/ycsb) so that
// go-ycsb and its dependencies stay out of what a tablekit user compiles.
//
// [DB] is a go-ycsb binding over any [tablekit.Client]: open the client by
// URL (tablekit.Open with mem://, file://, bigtable://, dynamodb:// or
// tablestore://) and every backend runs the same workload. The binding is
// also registered with go-ycsb as "tablekit", reading the URL from the
// property tablekit.url. Raw bindings of the native clients ([NewRawBigtable],
// [NewRawDynamoDB], [NewRawTablestore]) do the same operations directly, so
// that an adapter's overhead is the ratio of the two under the same
// workload.
//
// [Run] loads a table and runs one workload for a fixed time, measuring
// each operation in the binding (throughput, p50 and p99 per operation);
// [Workloads] holds YCSB's A–F with zipfian request distribution
// (constant 0.99), records of 10 fields × 100 bytes and scans of 1–100
// rows, uniform. The command ycsb/cmd/ycsb-matrix runs every backend and
// raw client against the emulators and prints the table published in
// ycsb/README.md.
//
// The table used has one String key column, "key", and the fields as
// Binary columns (YCSB's values are random bytes).
package tkycsb
