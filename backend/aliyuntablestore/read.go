package aliyuntablestore

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/rowmodel"
)

// Reads. Tablestore and tablekit select the same cells (visibility, then
// TimeRange, then the newest MaxVersions of each column), but they differ
// in two ways that the adapter bridges:
//
//   - A Tablestore filter reads only the columns in columns_to_get, while
//     tablekit evaluates filters on every selected cell before the
//     projection. The adapter adds the filter's columns to columns_to_get,
//     evaluates the filter itself on what comes back (with
//     rowmodel.MatchFilter, the one evaluator every backend shares) and
//     strips them again.
//   - Tablestore returns no row when nothing is selected in it (a
//     projection of columns the row lacks, a time range without versions),
//     while tablekit returns every row that exists. A GetRow that gets no
//     row under a restrictive selection reads the whole row once more and
//     answers from that read alone, so the answer is one atomic snapshot.
//     Range reads under a restrictive selection ask for every column (and,
//     with a time range, every visible version) and select locally.

// readPlan is what one SDK read asks for.
type readPlan struct {
	cols        []string // columns_to_get; nil means every column
	maxVersions int32
	timeRange   *tablekit.TimeRange
	// final plans answer on their own; a first plan that finds no row may
	// need the full plan.
	final bool
	// local means that the selection (TimeRange, MaxVersions) is applied
	// by the adapter on what the plan returns.
	local bool
}

// key identifies a plan for grouping batch reads.
func (p *readPlan) key() string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(int64(p.maxVersions), 10))
	if p.timeRange != nil {
		b.WriteString("|")
		b.WriteString(strconv.FormatInt(p.timeRange.Start, 10))
		b.WriteString("-")
		b.WriteString(strconv.FormatInt(p.timeRange.End, 10))
	}
	if p.cols != nil {
		b.WriteString("|c")
		for _, c := range p.cols {
			b.WriteString(",")
			b.WriteString(c)
		}
	}
	return b.String()
}

func clampVersions(n int) int32 {
	if n > math.MaxInt32 || n < 1 {
		return math.MaxInt32
	}
	return int32(n)
}

// restrictive reports whether a read may select nothing in a row that exists.
func restrictive(spec *tablekit.ReadSpec) bool {
	return spec.Columns != nil || spec.TimeRange != nil
}

// firstPlan is the cheapest read that answers spec exactly when it finds
// a row.
func firstPlan(spec *tablekit.ReadSpec) readPlan {
	if !restrictive(spec) {
		return readPlan{maxVersions: clampVersions(spec.MaxVersions), final: true}
	}
	var cols []string // nil: every column
	if spec.Columns != nil {
		cols = slices.Clone(spec.Columns)
		for _, c := range rowmodel.FilterColumns(spec.Filter) {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
		if len(cols) == 0 {
			// Only existence is asked: the full plan is the one read.
			return fullPlan(spec)
		}
	}
	return readPlan{cols: cols, maxVersions: clampVersions(spec.MaxVersions), timeRange: spec.TimeRange}
}

// fullPlan reads every column of the row: every visible version when the
// spec has a time range, else the newest MaxVersions, which is all the
// selection can use.
func fullPlan(spec *tablekit.ReadSpec) readPlan {
	if spec.TimeRange != nil {
		return readPlan{maxVersions: math.MaxInt32, final: true, local: true}
	}
	return readPlan{maxVersions: clampVersions(spec.MaxVersions), final: true, local: true}
}

// answer computes tablekit's answer from what a plan returned: present is
// whether the server returned the row, cells its cells in read order. The
// row is nil when it does not exist or fails the filter; again is true
// when a first plan found nothing and the full plan must decide.
func answer(spec *tablekit.ReadSpec, p *readPlan, present bool, cells []tablekit.Column) (cols []tablekit.Column, found, again bool) {
	if !present {
		if p.final || !rowmodel.MatchFilter(spec.Filter, nil) {
			return nil, false, false
		}
		return nil, false, true
	}
	sel := cells
	if p.local {
		sel = rowmodel.Select(make([]tablekit.Column, 0, len(cells)), cells, spec)
	}
	if spec.Filter != nil && !rowmodel.MatchFilter(spec.Filter, sel) {
		return nil, false, false
	}
	if spec.Columns != nil {
		sel = rowmodel.Project(sel, spec.Columns)
	}
	if len(sel) == 0 {
		sel = nil
	}
	return sel, true, false
}

func timeRange(tr *tablekit.TimeRange) *tablestore.TimeRange {
	if tr == nil {
		return nil
	}
	return &tablestore.TimeRange{Start: tr.Start, End: tr.End}
}

// GetRow implements tablekit.Backend.
func (b *Backend) GetRow(ctx context.Context, req *tablekit.GetRowRequest) (*tablekit.Row, error) {
	pk, err := nativeKey(req.Key)
	if err != nil {
		return nil, err
	}
	p := firstPlan(&req.Read)
	for {
		present, cells, err := b.getRow(ctx, req.Meta.Name, pk, &p)
		if err != nil {
			return nil, staleKey(err)
		}
		cols, found, again := answer(&req.Read, &p, present, cells)
		if again {
			p = fullPlan(&req.Read)
			continue
		}
		if !found {
			return nil, nil
		}
		return &tablekit.Row{Key: req.Key, Columns: cols}, nil
	}
}

func (b *Backend) getRow(ctx context.Context, table string, pk *tablestore.PrimaryKey, p *readPlan) (bool, []tablekit.Column, error) {
	sreq := &tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName:    table,
		PrimaryKey:   pk,
		ColumnsToGet: p.cols,
		MaxVersion:   p.maxVersions,
		TimeRange:    timeRange(p.timeRange),
	}}
	resp, err := doCall(ctx, b, "/GetRow", sreq, false, b.c.GetRow)
	if err != nil {
		return false, nil, err
	}
	present := len(resp.PrimaryKey.PrimaryKeys) > 0 || len(resp.Columns) > 0
	cells, err := columnsOf(resp.Columns)
	return present, cells, err
}

// getResult is one row of a batch read, before the answer is computed.
type getResult struct {
	present bool
	cells   []tablekit.Column
	err     error
}

// BatchGetRow implements tablekit.Backend.
func (b *Backend) BatchGetRow(ctx context.Context, reqs []*tablekit.GetRowRequest) ([]tablekit.GetRowResponse, error) {
	out := make([]tablekit.GetRowResponse, len(reqs))
	plans := make([]readPlan, len(reqs))
	keys := make([]*tablestore.PrimaryKey, len(reqs))
	idx := make([]int, 0, len(reqs))
	for i, r := range reqs {
		pk, err := nativeKey(r.Key)
		if err != nil {
			out[i].Err = err
			continue
		}
		keys[i] = pk
		plans[i] = firstPlan(&r.Read)
		idx = append(idx, i)
	}
	res := make([]getResult, len(reqs))
	for len(idx) > 0 {
		if err := b.batchGet(ctx, reqs, plans, keys, idx, res); err != nil {
			return nil, err
		}
		var again []int
		for _, i := range idx {
			if res[i].err != nil {
				out[i].Err = res[i].err
				continue
			}
			cols, found, more := answer(&reqs[i].Read, &plans[i], res[i].present, res[i].cells)
			switch {
			case more:
				plans[i] = fullPlan(&reqs[i].Read)
				again = append(again, i)
			case found:
				out[i].Row = &tablekit.Row{Key: reqs[i].Key, Columns: cols}
			}
		}
		idx = again
	}
	for i := range out {
		out[i].Err = staleKey(out[i].Err)
	}
	return out, nil
}

// batchGet reads the rows idx with their plans, in as few BatchGetRow
// calls as Tablestore allows (one plan per table and no repeated row per
// call), running the calls concurrently.
func (b *Backend) batchGet(ctx context.Context, reqs []*tablekit.GetRowRequest, plans []readPlan, keys []*tablestore.PrimaryKey, idx []int, res []getResult) error {
	type group struct {
		plan string
		rows map[string]bool
	}
	var calls [][]int
	var groups []map[string]*group // per call: table -> group
	for _, i := range idx {
		t := reqs[i].Meta.Name
		pkey := plans[i].key()
		k := string(codec.EncodeKey(reqs[i].Key))
		placed := false
		for c := range calls {
			g := groups[c][t]
			if g == nil {
				groups[c][t] = &group{plan: pkey, rows: map[string]bool{k: true}}
			} else if g.plan != pkey || g.rows[k] {
				continue
			} else {
				g.rows[k] = true
			}
			calls[c] = append(calls[c], i)
			placed = true
			break
		}
		if !placed {
			calls = append(calls, []int{i})
			groups = append(groups, map[string]*group{t: {plan: pkey, rows: map[string]bool{k: true}}})
		}
	}
	return driver.Parallel(ctx, len(calls), batchParallelism, func(ctx context.Context, c int) error {
		return b.batchGetCall(ctx, reqs, plans, keys, calls[c], res)
	})
}

// batchParallelism is how many BatchGetRow calls one batch read runs at
// once when its rows need several (several read plans for one table, or a
// row read twice).
const batchParallelism = 4

// batchGetCall reads rows idx (one plan per table, no row twice) and
// fills their results. When the adapter runs the retries, rows that failed
// with a code the SDK would retry are read again, alone, within the same
// attempt budget as the whole call.
func (b *Backend) batchGetCall(ctx context.Context, reqs []*tablekit.GetRowRequest, plans []readPlan, keys []*tablestore.PrimaryKey, idx []int, res []getResult) error {
	return b.retryRows(ctx, idx, func(bud *budget, idx []int) ([]int, error) {
		return b.batchGetOnce(ctx, bud, reqs, plans, keys, idx, res)
	})
}

// batchGetOnce sends one BatchGetRow for rows idx, fills their results and
// returns the rows worth another attempt.
func (b *Backend) batchGetOnce(ctx context.Context, bud *budget, reqs []*tablekit.GetRowRequest, plans []readPlan, keys []*tablestore.PrimaryKey, idx []int, res []getResult) (again []int, err error) {
	sreq := &tablestore.BatchGetRowRequest{}
	crit := map[string]*tablestore.MultiRowQueryCriteria{}
	perTable := map[string][]int{}
	for _, i := range idx {
		t := reqs[i].Meta.Name
		c := crit[t]
		if c == nil {
			p := &plans[i]
			c = &tablestore.MultiRowQueryCriteria{
				TableName:    t,
				ColumnsToGet: p.cols,
				MaxVersion:   int(p.maxVersions),
				TimeRange:    timeRange(p.timeRange),
			}
			crit[t] = c
			sreq.MultiRowQueryCriteria = append(sreq.MultiRowQueryCriteria, c)
		}
		c.AddRow(keys[i])
		perTable[t] = append(perTable[t], i)
	}
	resp, err := attemptsCall(ctx, b, bud, "/BatchGetRow", sreq, false, b.c.BatchGetRow)
	err = mapError(err)
	if err != nil {
		if ctx.Err() != nil || !definite(err) {
			return nil, err
		}
		parts, ok := splitParts(idx, func(i int) string { return reqs[i].Meta.Name })
		if !ok {
			for _, i := range idx {
				res[i] = getResult{err: err}
			}
			return nil, nil
		}
		for _, p := range parts {
			if err := b.batchGetCall(ctx, reqs, plans, keys, p, res); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	for t, is := range perTable {
		rows := resp.TableToRowsResult[t]
		for j, i := range is {
			if j >= len(rows) {
				res[i] = getResult{err: tablekit.Errorf(tablekit.ErrUnavailable, "the BatchGetRow answer holds %d results for table %q, the request %d rows", len(rows), t, len(is))}
				continue
			}
			rr := &rows[j]
			if !rr.IsSucceed {
				res[i] = getResult{err: rowError(rr.Error, resp.RequestId)}
				if tablestore.ShouldRetryViaErrorAndAction(rr.Error.Code, rr.Error.Message, "/BatchGetRow") {
					again = append(again, i)
				}
				continue
			}
			cells, err := columnsOf(rr.Columns)
			res[i] = getResult{present: len(rr.PrimaryKey.PrimaryKeys) > 0 || len(rr.Columns) > 0, cells: cells, err: err}
		}
	}
	slices.Sort(again)
	return again, nil
}

// GetRange implements tablekit.Backend.
func (b *Backend) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	crit, p, err := rangeCriteria(req)
	if err != nil {
		return nil, err
	}
	sreq := &tablestore.GetRangeRequest{RangeRowQueryCriteria: crit}
	resp, err := doCall(ctx, b, "/GetRange", sreq, false, b.c.GetRange)
	if err != nil {
		return nil, staleKey(err)
	}
	return rangePage(&req.Read, &p, resp)
}

// rangeCriteria is the service's query for req, and the plan that
// rangePage answers its rows with.
func rangeCriteria(req *tablekit.GetRangeRequest) (*tablestore.RangeRowQueryCriteria, readPlan, error) {
	spec := &req.Read
	start, err := nativeKey(req.Start)
	if err != nil {
		return nil, readPlan{}, err
	}
	end, err := nativeKey(req.End)
	if err != nil {
		return nil, readPlan{}, err
	}
	crit := &tablestore.RangeRowQueryCriteria{
		TableName:       req.Meta.Name,
		StartPrimaryKey: start,
		EndPrimaryKey:   end,
		Limit:           int32(min(max(req.Limit, 1), tablekit.MaxPageRows)),
	}
	if req.Backward {
		crit.Direction = tablestore.BACKWARD
	}
	// Every existing row must come back, so a restrictive selection reads
	// every column; with a time range every visible version, selected here.
	p := readPlan{maxVersions: clampVersions(spec.MaxVersions), final: true}
	if spec.TimeRange != nil {
		p = readPlan{maxVersions: math.MaxInt32, final: true, local: true}
	}
	crit.MaxVersion = p.maxVersions
	if !p.local && spec.Filter != nil && fitsNative(spec.Filter) {
		// The server selects the same cells, so its filter keeps the rows
		// tablekit keeps; answer checks it again with MatchFilter. A filter
		// larger than the service accepts is left to MatchFilter alone.
		if crit.Filter, err = nativeFilter(spec.Filter); err != nil {
			return nil, readPlan{}, err
		}
	}
	return crit, p, nil
}

// rangePage is the page of rows the service answered, as spec selects
// them under plan p.
func rangePage(spec *tablekit.ReadSpec, p *readPlan, resp *tablestore.GetRangeResponse) (*tablekit.GetRangeResponse, error) {
	// One array for every key part and one for every cell of the page.
	nk, nc := 0, 0
	for _, r := range resp.Rows {
		if r != nil {
			if r.PrimaryKey != nil {
				nk += len(r.PrimaryKey.PrimaryKeys)
			}
			nc += len(r.Columns)
		}
	}
	keyBuf := make([]tablekit.KeyPart, 0, nk)
	cellBuf := make([]tablekit.Column, 0, nc)
	page := &tablekit.GetRangeResponse{Rows: make([]tablekit.Row, 0, len(resp.Rows))}
	for _, r := range resp.Rows {
		if r == nil {
			continue
		}
		k, err := appendKey(keyBuf, r.PrimaryKey)
		if err != nil {
			return nil, err
		}
		keyBuf = keyBuf[:len(keyBuf)+len(k)]
		cells, err := appendColumns(cellBuf, r.Columns)
		if err != nil {
			return nil, err
		}
		cellBuf = cellBuf[:len(cellBuf)+len(cells)]
		cols, found, _ := answer(spec, p, true, cells)
		if found {
			page.Rows = append(page.Rows, tablekit.Row{Key: k, Columns: cols})
		}
	}
	if resp.NextStartPrimaryKey != nil && len(resp.NextStartPrimaryKey.PrimaryKeys) > 0 {
		var err error
		if page.Next, err = keyOf(resp.NextStartPrimaryKey); err != nil {
			return nil, err
		}
	}
	return page, nil
}
