package awsdynamodb

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/keycodec"
	"github.com/tablekit/tablekit/rowmodel"
)

// readItem turns a fetched item into what a read returns.
func readItem(meta *tablekit.TableMeta, key tablekit.PrimaryKey, item map[string]types.AttributeValue, spec *tablekit.ReadSpec, now int64) (*tablekit.Row, error) {
	if len(item) == 0 {
		return nil, nil
	}
	r, err := decodeRow(item)
	if err != nil {
		return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "table %q: stored row %v", meta.Name, key)
	}
	cols, found := rowmodel.Read(&r, meta.Options, spec, now)
	if !found {
		return nil, nil
	}
	return &tablekit.Row{Key: key, Columns: cols}, nil
}

// GetRow implements tablekit.Backend: one consistent GetItem.
func (b *Backend) GetRow(ctx context.Context, req *tablekit.GetRowRequest) (*tablekit.Row, error) {
	ti, err := b.info(ctx, req.Meta.Name)
	if err != nil {
		return nil, err
	}
	sk, err := sortKey(req.Meta, req.Key)
	if err != nil {
		return nil, nil // no row can be stored at a key DynamoDB cannot hold
	}
	out, err := b.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(ti.native),
		Key:            keyAttrs(shardOf(req.Key[0].Value, ti.shards), sk),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, b.tableErr(ctx, err, req.Meta.Name, "GetItem")
	}
	return readItem(req.Meta, req.Key, out.Item, &req.Read, req.Now)
}

// BatchGetRow implements tablekit.Backend: keys grouped per table (so that a
// missing table fails only its own rows), deduplicated, in BatchGetItem calls
// of at most 100 keys run in parallel; UnprocessedKeys are retried with
// capped jittered backoff until done or ctx ends.
func (b *Backend) BatchGetRow(ctx context.Context, reqs []*tablekit.GetRowRequest) ([]tablekit.GetRowResult, error) {
	if err := b.check(ctx); err != nil {
		return nil, err
	}
	out := make([]tablekit.GetRowResult, len(reqs))
	type slot struct {
		sk    string
		shard int
		idx   []int
	}
	type group struct {
		ti    *tableInfo
		slots []*slot
		bySK  map[string]*slot
	}
	groups := map[string]*group{}
	failed := map[string]error{} // tables whose metadata could not be read
	var order []string
	for i, r := range reqs {
		if err := failed[r.Meta.Name]; err != nil {
			out[i].Err = err
			continue
		}
		g := groups[r.Meta.Name]
		if g == nil {
			ti, err := b.info(ctx, r.Meta.Name)
			if err != nil {
				if isCtx(ctx) {
					return nil, ctx.Err()
				}
				failed[r.Meta.Name] = err
				out[i].Err = err
				continue
			}
			g = &group{ti: ti, bySK: map[string]*slot{}}
			groups[r.Meta.Name] = g
			order = append(order, r.Meta.Name)
		}
		sk, err := sortKey(r.Meta, r.Key)
		if err != nil {
			continue // not found: no row can be stored at this key
		}
		s := g.bySK[string(sk)]
		if s == nil {
			s = &slot{sk: string(sk), shard: shardOf(r.Key[0].Value, g.ti.shards)}
			g.bySK[s.sk] = s
			g.slots = append(g.slots, s)
		}
		s.idx = append(s.idx, i)
	}
	type chunk struct {
		table string
		g     *group
		slots []*slot
	}
	var chunks []chunk
	for _, name := range order {
		g := groups[name]
		for lo := 0; lo < len(g.slots); lo += tablekit.MaxBatchGet {
			chunks = append(chunks, chunk{table: name, g: g, slots: g.slots[lo:min(lo+tablekit.MaxBatchGet, len(g.slots))]})
		}
	}
	err := b.parallel(ctx, len(chunks), func(ctx context.Context, c int) error {
		ch := chunks[c]
		keys := make([]map[string]types.AttributeValue, len(ch.slots))
		for i, s := range ch.slots {
			keys[i] = keyAttrs(s.shard, []byte(s.sk))
		}
		items, err := b.batchGet(ctx, ch.g.ti.native, keys)
		for _, s := range ch.slots {
			for _, i := range s.idx {
				if err != nil {
					out[i].Err = b.tableErr(ctx, err, ch.table, "BatchGetItem")
					continue
				}
				out[i].Row, out[i].Err = readItem(reqs[i].Meta, reqs[i].Key, items[s.sk], &reqs[i].Read, reqs[i].Now)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if isCtx(ctx) {
		return nil, ctx.Err()
	}
	return out, nil
}

func isCtx(ctx context.Context) bool { return ctx.Err() != nil }

// batchGet fetches keys (≤ 100, distinct) from one table, retrying
// UnprocessedKeys and retryable failures with capped jittered backoff. It
// returns the items by sort key.
func (b *Backend) batchGet(ctx context.Context, native string, keys []map[string]types.AttributeValue) (map[string]map[string]types.AttributeValue, error) {
	items := make(map[string]map[string]types.AttributeValue, len(keys))
	pending := keys
	for attempt := 0; len(pending) > 0; {
		out, err := b.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
			RequestItems: map[string]types.KeysAndAttributes{
				native: {Keys: pending, ConsistentRead: aws.Bool(true)},
			},
		})
		if err != nil {
			if !retryable(err) || attempt >= maxTransientRetries {
				return nil, err
			}
		} else {
			for _, it := range out.Responses[native] {
				items[string(itemSortKey(it))] = it
			}
			next := out.UnprocessedKeys[native].Keys
			if len(next) < len(pending) {
				attempt = 0 // progress
			}
			pending = next
			if len(pending) == 0 {
				break
			}
		}
		if err := sleep(ctx, backoff(attempt, batchBackoffBase, batchBackoffCap)); err != nil {
			return nil, err
		}
		attempt++
	}
	return items, nil
}

// parallel runs f(0..n-1) with at most the backend's concurrency at once.
// It returns ctx's error if ctx ends.
func (b *Backend) parallel(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	if n == 1 {
		return f(ctx, 0)
	}
	sem := make(chan struct{}, b.opts.concurrency)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := 0; i < n; i++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(ctx, i); err != nil {
				once.Do(func() { first = err })
			}
		}()
	}
	wg.Wait()
	return first
}

// Range reads.
//
// A range inside one partition-key value is one Query on that value's
// shard; any other range is a merge of one Query stream per shard, each in
// sort-key order, fetched page by page: a stream's first page is small (about
// twice its share of the rows wanted), later pages double, and a stream's
// next page is requested in the background when its buffer runs low, so the
// merge rarely waits. A GetRange call reads at most about Limit+1 items per
// stream plus the scan cap, never the whole range.

// maxScan bounds how many stored rows one GetRange page examines.
const maxScan = tablekit.MaxScanRows

type rangeBounds struct {
	backward bool
	// lo and hi are the sort-key interval in byte order (nil = unbounded);
	// loEx/hiEx exclude an item equal to the bound.
	lo, hi     []byte
	loEx, hiEx bool
	empty      bool
}

func newBounds(req *tablekit.GetRangeRequest) rangeBounds {
	startB, startExact := keycodec.Bound(req.Start)
	endB, endExact := keycodec.Bound(req.End)
	var rb rangeBounds
	rb.backward = req.Backward
	if !req.Backward {
		// [start, end): both bounds are byte bounds that work the same exact or not.
		if startB == nil {
			rb.empty = true
			return rb
		}
		rb.lo, rb.hi, rb.hiEx = startB, endB, true
	} else {
		// From start down to end, exclusive of end.
		rb.hi, rb.hiEx = startB, !startExact
		if endB == nil {
			rb.empty = true
			return rb
		}
		rb.lo, rb.loEx = endB, endExact
	}
	if len(rb.lo) == 0 && !rb.loEx {
		rb.lo = nil
	}
	if rb.lo != nil && rb.hi != nil {
		c := bytes.Compare(rb.lo, rb.hi)
		if c > 0 || (c == 0 && (rb.loEx || rb.hiEx)) {
			rb.empty = true
		}
	}
	return rb
}

// in reports where sk lies: -1 before the walk's near end (skip it), 0 in
// range, 1 past the far end (the stream is done).
func (rb *rangeBounds) in(sk []byte) int {
	below := rb.lo != nil && (bytes.Compare(sk, rb.lo) < 0 || rb.loEx && bytes.Equal(sk, rb.lo))
	above := rb.hi != nil && (bytes.Compare(sk, rb.hi) > 0 || rb.hiEx && bytes.Equal(sk, rb.hi))
	switch {
	case !below && !above:
		return 0
	case below == rb.backward:
		return 1
	}
	return -1
}

// keyCondition builds the Query's key condition for one shard: relaxed
// bounds (inclusive; cut to DynamoDB's 1024-byte sort-key limit) that hold
// every key of the range; in() trims the rest.
func (rb *rangeBounds) keyCondition(shard int) (string, map[string]types.AttributeValue) {
	vals := map[string]types.AttributeValue{":s": &types.AttributeValueMemberN{Value: strconv.Itoa(shard)}}
	lo := rb.lo
	if len(lo) > maxSortKeySize {
		lo = lo[:maxSortKeySize]
	}
	hi := rb.hi
	if len(hi) > maxSortKeySize {
		hi = keycodec.PrefixSuccessor(hi[:maxSortKeySize])
	}
	cond := "#s = :s"
	switch {
	case len(lo) > 0 && hi != nil:
		cond += " AND #k BETWEEN :lo AND :hi"
		vals[":lo"] = &types.AttributeValueMemberB{Value: lo}
		vals[":hi"] = &types.AttributeValueMemberB{Value: hi}
	case len(lo) > 0:
		cond += " AND #k >= :lo"
		vals[":lo"] = &types.AttributeValueMemberB{Value: lo}
	case hi != nil:
		cond += " AND #k <= :hi"
		vals[":hi"] = &types.AttributeValueMemberB{Value: hi}
	}
	return cond, vals
}

// pinnedShard returns the one shard a range can touch when its bounds hold
// the same finite partition-key value, or -1.
func pinnedShard(req *tablekit.GetRangeRequest, shards int) int {
	if shards == 1 {
		return 0
	}
	a, b := req.Start[0].Value, req.End[0].Value
	if a.IsInf() || b.IsInf() || !a.Equal(b) {
		return -1
	}
	return shardOf(a, shards)
}

type pageResult struct {
	items []map[string]types.AttributeValue
	lek   map[string]types.AttributeValue
	err   error
}

// stream is one shard's Query, consumed in sort-key order.
type stream struct {
	shard   int
	items   []map[string]types.AttributeValue
	pos     int
	lek     map[string]types.AttributeValue
	done    bool // no more pages
	limit   int32
	pending chan pageResult // non-nil while a page is being fetched
}

// GetRange implements tablekit.Backend.
func (b *Backend) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.RangePage, error) {
	ti, err := b.info(ctx, req.Meta.Name)
	if err != nil {
		return nil, err
	}
	page := &tablekit.RangePage{}
	rb := newBounds(req)
	if rb.empty {
		return page, nil
	}
	limit := max(req.Limit, 1)
	want := limit + 1 // one more item tells where the next page starts
	var shards []int
	if s := pinnedShard(req, ti.shards); s >= 0 {
		shards = []int{s}
	} else {
		shards = make([]int, ti.shards)
		for i := range shards {
			shards[i] = i
		}
	}
	first := want
	if len(shards) > 1 {
		first = min(want, max((2*want+len(shards)-1)/len(shards), 16))
	}
	qctx, cancel := context.WithCancel(ctx)
	streams := make([]*stream, len(shards))
	defer func() {
		cancel()
		for _, s := range streams {
			if s != nil && s.pending != nil {
				<-s.pending
			}
		}
	}()
	query := func(s *stream) pageResult {
		cond, vals := rb.keyCondition(s.shard)
		in := &dynamodb.QueryInput{
			TableName:                 aws.String(ti.native),
			KeyConditionExpression:    aws.String(cond),
			ExpressionAttributeNames:  map[string]string{"#s": attrShard},
			ExpressionAttributeValues: vals,
			ScanIndexForward:          aws.Bool(!rb.backward),
			ConsistentRead:            aws.Bool(true),
			Limit:                     aws.Int32(s.limit),
			ExclusiveStartKey:         s.lek,
		}
		if len(vals) > 1 {
			in.ExpressionAttributeNames["#k"] = attrKey
		}
		out, err := b.client.Query(qctx, in)
		if err != nil {
			return pageResult{err: err}
		}
		return pageResult{items: out.Items, lek: out.LastEvaluatedKey}
	}
	// fetch requests a stream's next page in the background.
	fetch := func(s *stream) {
		ch := make(chan pageResult, 1)
		s.pending = ch
		go func() { ch <- query(s) }()
	}
	// next makes a stream's next page current: the one being fetched, or,
	// when none is, one fetched now (no goroutine: the merge waits for it
	// anyway).
	next := func(s *stream) error {
		var r pageResult
		if s.pending != nil {
			r = <-s.pending
			s.pending = nil
		} else {
			r = query(s)
		}
		if r.err != nil {
			return b.tableErr(ctx, r.err, req.Meta.Name, "Query")
		}
		s.items, s.pos, s.lek = r.items, 0, r.lek
		s.done = len(r.lek) == 0
		s.limit = min(s.limit*2, int32(min(want, 1<<20)))
		return nil
	}
	for i, sh := range shards {
		streams[i] = &stream{shard: sh, limit: int32(first)}
		if len(shards) > 1 {
			fetch(streams[i]) // the shards' first pages, in parallel
		}
	}
	scanned := 0
	// head returns a stream's next in-range item (fetching as needed), or nil.
	head := func(s *stream) (map[string]types.AttributeValue, []byte, error) {
		for {
			for s.pos < len(s.items) {
				it := s.items[s.pos]
				sk := itemSortKey(it)
				switch rb.in(sk) {
				case 0:
					// Prefetch the next page when this one runs low.
					if left := len(s.items) - s.pos; !s.done && s.pending == nil && left <= len(s.items)/4 && left < want-scanned {
						fetch(s)
					}
					return it, sk, nil
				case 1:
					s.items, s.pos, s.done = nil, 0, true
					if s.pending != nil {
						<-s.pending
						s.pending = nil
					}
					return nil, nil, nil
				}
				s.pos++
			}
			if s.done && s.pending == nil {
				return nil, nil, nil
			}
			if err := next(s); err != nil {
				return nil, nil, err
			}
		}
	}
	pr := newPageReader(req.Meta, &req.Read, req.Now)
	for {
		var best *stream
		var bestItem map[string]types.AttributeValue
		var bestSK []byte
		for _, s := range streams {
			it, sk, err := head(s)
			if err != nil {
				return nil, err
			}
			if it == nil {
				continue
			}
			if best == nil || (bytes.Compare(sk, bestSK) < 0) != rb.backward {
				best, bestItem, bestSK = s, it, sk
			}
		}
		if best == nil {
			return page, nil
		}
		key, err := keycodec.Decode(req.Meta.Key, bestSK)
		if err != nil {
			return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "table %q: stored sort key %x", req.Meta.Name, bestSK)
		}
		if len(page.Rows) >= limit || scanned >= maxScan {
			page.Next = key
			return page, nil
		}
		best.pos++
		scanned++
		row, ok, err := pr.read(key, bestItem)
		if err != nil {
			return nil, err
		}
		if ok {
			if page.Rows == nil {
				// Room for the rows the fetched pages hold, up to the limit.
				n := 1
				for _, s := range streams {
					n += len(s.items) - s.pos
				}
				page.Rows = make([]tablekit.Row, 0, min(n, limit))
			}
			page.Rows = append(page.Rows, row)
		}
	}
}

// pageReader turns the items of one range page into rows. The rows share
// a few large column buffers instead of one allocation each. A plain read
// (no filter, projection or time range, and at least as many versions as
// the table keeps) returns a row's visible cells as stored, so a row whose
// cells are all visible is decoded straight into the shared buffer and
// returned as it is; any other row is decoded into a scratch buffer and
// read from there with rowmodel.AppendRead.
type pageReader struct {
	meta    *tablekit.TableMeta
	spec    *tablekit.ReadSpec
	now     int64
	plain   bool
	last    int               // the number of cells of the last item
	scratch []tablekit.Column // the decoded cells of the current item
	cols    []tablekit.Column // the current shared buffer of returned columns
}

func newPageReader(meta *tablekit.TableMeta, spec *tablekit.ReadSpec, now int64) *pageReader {
	plain := spec.Filter == nil && spec.Columns == nil && spec.TimeRange == nil && spec.MaxVersions >= meta.Options.MaxVersions
	return &pageReader{meta: meta, spec: spec, now: now, plain: plain}
}

// pageColumns is the least number of columns a shared buffer holds.
const pageColumns = 256

// room makes sure the shared buffer has room for n more columns.
func (p *pageReader) room(n int) {
	if p.cols == nil || cap(p.cols)-len(p.cols) < n {
		p.cols = make([]tablekit.Column, 0, max(n, pageColumns))
	}
}

// read returns the row of item at key, and false when the read does not
// return it (it does not exist, or fails the filter).
func (p *pageReader) read(key tablekit.PrimaryKey, item map[string]types.AttributeValue) (tablekit.Row, bool, error) {
	opts := p.meta.Options
	var r rowmodel.Row
	var err error
	if p.plain {
		// Room for as many cells as the last row had (the rows of a range
		// tend to be alike); a row with more grows into a buffer of its own.
		p.room(p.last)
		start := len(p.cols)
		r, err = appendRow(p.cols[start:start], item)
		if err != nil {
			return tablekit.Row{}, false, p.corrupt(key, err)
		}
		p.last = len(r.Cells)
		if !rowmodel.Exists(&r, opts, p.now) {
			return tablekit.Row{}, false, nil
		}
		if n := len(r.Cells); len(rowmodel.Visible(&r, opts, p.now)) == n {
			if n <= cap(p.cols)-start {
				p.cols = p.cols[:start+n]
			}
			return tablekit.Row{Key: key, Columns: r.Cells[:n:n]}, true, nil
		}
		// Some cell is hidden: read from a copy.
		p.scratch = append(p.scratch[:0], r.Cells...)
		r.Cells = p.scratch
	} else {
		r, err = appendRow(p.scratch[:0], item)
		if err != nil {
			return tablekit.Row{}, false, p.corrupt(key, err)
		}
		p.scratch = r.Cells
	}
	p.room(len(r.Cells))
	start := len(p.cols)
	out, ok := rowmodel.AppendRead(p.cols, &r, opts, p.spec, p.now)
	if !ok {
		return tablekit.Row{}, false, nil
	}
	p.cols = out
	return tablekit.Row{Key: key, Columns: out[start:len(out):len(out)]}, true, nil
}

func (p *pageReader) corrupt(key tablekit.PrimaryKey, err error) error {
	return tablekit.WrapError(tablekit.ErrUnavailable, err, "table %q: stored row %v", p.meta.Name, key)
}

// String describes a range for messages.
func (rb rangeBounds) String() string {
	return fmt.Sprintf("[%x %v, %x %v] backward=%v", rb.lo, rb.loEx, rb.hi, rb.hiEx, rb.backward)
}
