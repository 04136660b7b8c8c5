package driver

import "github.com/tablekit/tablekit"

// CheckUpdateTable is UpdateTable's precondition (SPEC §3) for a store that
// compares the table's metadata itself: req applies only to the table as
// req.Meta read it. Another Incarnation (the table was deleted and created
// again) is ErrTableNotFound; another Generation (its options changed
// since) is ErrConditionFailed; both name the table.
func CheckUpdateTable(stored *tablekit.TableMeta, req *tablekit.UpdateTableRequest) error {
	switch {
	case stored.Incarnation != req.Meta.Incarnation:
		return tablekit.Errorf(tablekit.ErrTableNotFound, "table %q was deleted and created again", req.Meta.Name)
	case stored.Generation != req.Meta.Generation:
		return tablekit.Errorf(tablekit.ErrConditionFailed, "table %q: options changed (generation %d, expected %d)", req.Meta.Name, stored.Generation, req.Meta.Generation)
	}
	return nil
}
