package conformance

import (
	"time"

	tk "github.com/tablekit/tablekit"
)

// indexAgreesWithTable checks that the index holds exactly the table's
// rows that have a visible status, each under that status, and that a
// verifying Reindex finds no entry missing.
func (e *env) indexAgreesWithTable(what string, t tbl, keys ...string) {
	e.t.Helper()
	var want []string
	for _, k := range keys {
		row, found, err := t.GetRow(e.ctx, strKey(k))
		if !e.ok(what+": GetRow "+k, err) {
			return
		}
		if !found {
			continue
		}
		if v, ok := row.Get("status"); ok {
			s, _ := v.Str()
			want = append(want, s+"/"+k)
		}
	}
	e.diff(what+": index rows", want, e.indexKeys(what, t.Index("by_status")))
	rep, err := e.c.Reindex(e.ctx, t.Name(), "by_status", true)
	if e.ok(what+": Reindex verify", err) && rep.Missing != 0 {
		e.t.Errorf("%s: Reindex verify: %+v, want no missing entry", what, rep)
	}
}

// testIndexRaiseMaxVersions: raising MaxVersions may bring back versions
// that were hidden (SPEC §5), whose entries a reindex had removed; the
// index follows what is visible at once (§16), so UpdateTable puts their
// entries back before it returns.
func testIndexRaiseMaxVersions(e *env) {
	t := e.indexTable("raisemv", tk.TableOptions{MaxVersions: 1}, byStatus)
	v1 := e.now()
	e.put(t, strKey("a"), col("status", tk.String("one"), v1))
	e.clock.Advance(time.Second)
	v2 := e.now()
	e.update(t, strKey("a"), tk.PutAt("status", tk.String("two"), v2))
	e.clock.Advance(2 * time.Minute) // past the grace: the entry of "one" may go
	rep, err := e.c.Reindex(e.ctx, t.Name(), "by_status", false)
	e.must("Reindex", err)
	if rep.Missing != 0 {
		e.t.Errorf("Reindex before raising: %+v, want no missing entry", rep)
	}
	e.must("UpdateTable MaxVersions 3", e.c.UpdateTable(e.ctx, t.Name(), tk.TableOptions{MaxVersions: 3}))
	e.indexAgreesWithTable("after raising MaxVersions", t, "a")
	// Deleting the newest version shows the older one, if the backend kept it.
	e.update(t, strKey("a"), tk.DeleteVersion("status", v2))
	e.indexAgreesWithTable("after deleting the newest version", t, "a")
}

// testIndexRaiseTTL: raising the TTL may bring back expired values not yet
// collected (SPEC §5, §6): their rows are in the index when UpdateTable
// returns.
func testIndexRaiseTTL(e *env) {
	t := e.indexTable("raisettl", tk.TableOptions{TTL: 3 * tk.MinTTL}, byStatus)
	e.put(t, strKey("a"), col("status", tk.String("old"), 0))
	e.clock.Advance(2 * tk.MinTTL)
	e.put(t, strKey("b"), col("status", tk.String("young"), 0))
	e.must("UpdateTable TTL 1 day", e.c.UpdateTable(e.ctx, t.Name(), tk.TableOptions{TTL: tk.MinTTL}))
	e.diff("a expired by the lower TTL", []string{"young/b"}, e.indexKeys("lowered", t.Index("by_status")))
	e.clock.Advance(2 * time.Minute) // past the grace: the entry of a may go
	_, err := e.c.Reindex(e.ctx, t.Name(), "by_status", false)
	e.must("Reindex", err)
	e.must("UpdateTable TTL 5 days", e.c.UpdateTable(e.ctx, t.Name(), tk.TableOptions{TTL: 5 * tk.MinTTL}))
	e.indexAgreesWithTable("after raising the TTL", t, "a", "b")
	e.must("UpdateTable NoExpiry", e.c.UpdateTable(e.ctx, t.Name(), tk.TableOptions{TTL: tk.NoExpiry}))
	e.indexAgreesWithTable("after NoExpiry", t, "a", "b")
}
