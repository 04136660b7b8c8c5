package conformance

import (
	"errors"

	tk "github.com/tablekit/tablekit"
)

// What a backend says it supports (tablekit.Capabilities, derived from
// the optional interfaces it implements; SPEC §13-§15 name the features a
// backend may lack and must then refuse). A claim must hold when the
// optional method is called on the backend itself; an optional method the
// backend has but does not claim (its store lacks the feature at run
// time) must answer ErrUnimplemented (tablekit.ErrSkip is one) with
// nothing done, while the Client's operation still works through its
// fallback or is refused with ErrUnimplemented where it has none
// (S13_AtomicWrite, S15_ChangeFeed/Refused).

func capabilityCases() []testCase {
	return []testCase{
		{"Claimed", testCapabilitiesClaimed},
		{"Absent", testCapabilitiesAbsent},
	}
}

// capTable makes a table with rows 1 and 2 and returns it with the meta a
// request to the backend carries.
func (e *env) capTable() (tbl, *tk.TableMeta) {
	t := e.create("caps", schemaI, tk.TableOptions{})
	e.seedBatch(t, []tk.Row{row(intKey(1), col("c", iv(1), 0)), row(intKey(2), col("c", iv(2), 0))})
	m, err := e.c.DescribeTable(e.ctx, t.Name())
	if err != nil {
		e.t.Fatalf("DescribeTable: %v", err)
	}
	return t, &m
}

// capCalls calls each optional method the backend implements and reports,
// per capability, whether it implements it and what the call answered.
// The batch write puts row 3; the reads expect rows 1 and 2.
func (e *env) capCalls(m *tk.TableMeta) (has [3]bool, errs [3]error, check [3]func() string) {
	now := e.now()
	if br, ok := e.b.(tk.BatchReader); ok {
		has[0] = true
		reqs := []*tk.GetRowRequest{
			{Meta: m, Key: intKey(2), Read: tk.ReadSpec{MaxVersions: 1}, Now: now},
			{Meta: m, Key: intKey(1), Read: tk.ReadSpec{MaxVersions: 1}, Now: now},
		}
		res, err := br.BatchGetRow(e.ctx, reqs)
		errs[0] = err
		check[0] = func() string {
			if len(res) != 2 || res[0].Err != nil || res[1].Err != nil || res[0].Row == nil || res[1].Row == nil ||
				!res[0].Row.Key.Equal(intKey(2)) || !res[1].Row.Key.Equal(intKey(1)) {
				return "BatchGetRow of rows 2 and 1 did not return them in order"
			}
			return ""
		}
	}
	if bw, ok := e.b.(tk.BatchWriter); ok {
		has[1] = true
		reqs := []*tk.WriteRequest{{Meta: m, Kind: tk.WritePut, Key: intKey(3), Columns: []tk.Column{col("c", iv(3), now)}, Now: now}}
		res, err := bw.BatchWriteRow(e.ctx, reqs)
		errs[1] = err
		check[1] = func() string {
			if len(res) != 1 || res[0].Err != nil {
				return "BatchWriteRow of one put did not succeed"
			}
			return ""
		}
	}
	if rs, ok := e.b.(tk.RangeScanner); ok {
		has[2] = true
		var keys []tk.PrimaryKey
		req := &tk.GetRangeRequest{Meta: m, Start: intKey(1), End: intKey(3), Limit: 10, Read: tk.ReadSpec{MaxVersions: 1}, Now: now}
		_, err := rs.ScanRange(e.ctx, req, func(r tk.Row) bool {
			keys = append(keys, r.Key.Clone())
			return true
		})
		errs[2] = err
		check[2] = func() string {
			if len(keys) != 2 || !keys[0].Equal(intKey(1)) || !keys[1].Equal(intKey(2)) {
				return "ScanRange of [1, 3) did not lend rows 1 and 2"
			}
			return ""
		}
	}
	return has, errs, check
}

var capNames = [3]string{"BatchRead (BatchGetRow)", "BatchWrite (BatchWriteRow)", "LendingScan (ScanRange)"}

// testCapabilitiesClaimed: a claimed capability's method exists and works
// when called on the backend itself; the Client reports what the backend
// declares; a feature this suite cannot check yet is not claimed.
func testCapabilitiesClaimed(e *env) {
	caps := tk.CapabilitiesOf(e.b)
	if got := e.c.Capabilities(); got != caps {
		e.t.Errorf("Client.Capabilities() = %+v, the backend's are %+v", got, caps)
	}
	_, m := e.capTable()
	has, errs, check := e.capCalls(m)
	claimed := [3]bool{caps.BatchRead, caps.BatchWrite, caps.LendingScan}
	for i := range claimed {
		if !claimed[i] {
			continue
		}
		switch {
		case !has[i]:
			e.t.Errorf("the backend claims %s but does not implement the method", capNames[i])
		case errs[i] != nil:
			e.t.Errorf("the backend claims %s, but the call answered %v", capNames[i], errs[i])
		default:
			if msg := check[i](); msg != "" {
				e.t.Errorf("the backend claims %s: %s", capNames[i], msg)
			}
		}
	}
}

// testCapabilitiesAbsent: a method whose capability is not claimed answers
// an error matching ErrUnimplemented (such as tablekit.ErrSkip) and does
// nothing; the Client's batch calls and Scan still work, through their
// fallbacks.
func testCapabilitiesAbsent(e *env) {
	caps := tk.CapabilitiesOf(e.b)
	t, m := e.capTable()
	has, errs, _ := e.capCalls(m)
	claimed := [3]bool{caps.BatchRead, caps.BatchWrite, caps.LendingScan}
	for i := range claimed {
		if claimed[i] || !has[i] {
			continue
		}
		if !errors.Is(errs[i], tk.ErrUnimplemented) {
			e.t.Errorf("the backend does not claim %s, but the call answered %v, want an error matching ErrUnimplemented", capNames[i], errs[i])
		}
	}
	if f, ok := e.b.(tk.ChangeFeeder); ok && !caps.ChangeFeed {
		if _, err := f.DescribeChangeFeed(e.ctx, m); !errors.Is(err, tk.ErrUnimplemented) {
			e.t.Errorf("the backend does not claim ChangeFeed, but its DescribeChangeFeed answered %v, want an error matching ErrUnimplemented", err)
		}
	}
	if !caps.BatchWrite {
		if _, found, err := t.GetRow(e.ctx, intKey(3)); e.ok("GetRow 3", err) && found {
			e.t.Errorf("BatchWriteRow, not claimed, wrote row 3")
		}
	}
	// The Client's operations work whatever is claimed.
	res, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{tk.BatchPut(t.Name(), intKey(4), []tk.Column{col("c", iv(4), 0)})})
	if e.ok("BatchWriteRow", err) && res[0].Err != nil {
		e.t.Errorf("BatchWriteRow: %v", res[0].Err)
	}
	got, err := e.c.BatchGetRow(e.ctx, []tk.BatchGet{{Table: t.Name(), Key: intKey(4)}, {Table: t.Name(), Key: intKey(1)}})
	if e.ok("BatchGetRow", err) && (got[0].Err != nil || !got[0].Found || got[1].Err != nil || !got[1].Found) {
		e.t.Errorf("BatchGetRow of rows 4 and 1: %+v", got)
	}
	n := 0
	for r, err := range t.Scan(e.ctx, intKey(1), intKey(5)) {
		if !e.ok("Scan", err) {
			break
		}
		if r.Key.Equal(intKey(3)) {
			continue // written above when BatchWrite is claimed
		}
		n++
	}
	if n != 3 {
		e.t.Errorf("Scan of [1, 5) yielded %d rows other than 3, want 3 (1, 2, 4)", n)
	}
}
