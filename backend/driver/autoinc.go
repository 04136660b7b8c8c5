package driver

import "github.com/tablekit/tablekit"

// AutoIncrementTaken is the error of a write whose key holds
// tablekit.AutoIncrement when every one of the attempts values its store
// assigned was already a row (SPEC §14: rows written with explicit values
// kept landing just above the partition's counter). It is an
// ErrConditionFailed (each attempt was a put of a new row) and nothing was
// written; the values taken are gaps, never duplicates. key is the last
// key tried.
func AutoIncrementTaken(key tablekit.PrimaryKey, attempts int) error {
	return tablekit.Errorf(tablekit.ErrConditionFailed,
		"auto-increment: each of the %d keys assigned was already a row (rows with explicit values kept landing above the partition's counter), the last %v; nothing written", attempts, key)
}
