//go:build race || tablekit_scancheck

package fileengine_test

// scanChecked says tablekit.Table.Scan poisons the rows it yielded.
const scanChecked = true
