//go:build !race && !tablekit_scancheck

package tablekit

// scanCheck makes Table.Scan poison the rows it yielded (see ScanPoison).
var scanCheck = false
