package fileengine

import "github.com/tablekit/tablekit"

// SetAfterAssign sets the hook run between assigning an auto-increment
// value and writing its row (nil: none).
func SetAfterAssign(f func(tablekit.PrimaryKey)) { afterAssign = f }
