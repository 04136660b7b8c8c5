package awsdynamodb

import (
	"bytes"
	"context"
	"strconv"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/rowmodel"
)

// readItem turns a fetched item into what a read returns.
func readItem(meta *tablekit.TableMeta, key tablekit.PrimaryKey, item map[string]types.AttributeValue, spec *tablekit.ReadSpec, now int64) (*tablekit.Row, error) {
	if len(item) == 0 {
		return nil, nil
	}
	r, err := decodeRow(item)
	if err != nil {
		return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "stored row %v", key)
	}
	cols, found := rowmodel.Read(&r, meta.Options, spec, now)
	if !found {
		return nil, nil
	}
	return &tablekit.Row{Key: key.Clone(), Columns: cols}, nil
}

// GetRow implements tablekit.Backend: one consistent GetItem.
func (b *Backend) GetRow(ctx context.Context, req *tablekit.GetRowRequest) (*tablekit.Row, error) {
	ti, err := b.info(ctx, req.Meta)
	if err != nil {
		return nil, err
	}
	sk, err := sortKey(req.Key)
	if err != nil {
		return nil, nil // no row can be stored at a key DynamoDB cannot hold
	}
	out, err := b.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(ti.native),
		Key:            keyAttrs(ti.shardOf(req.Key[0].Value), sk),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, b.tableErr(ctx, err, req.Meta.Name, "GetItem")
	}
	return readItem(req.Meta, req.Key, out.Item, &req.Read, req.Now)
}

// BatchGetRow implements tablekit.BatchReader: keys grouped per table
// incarnation (so that a missing or stale table fails only its own rows),
// deduplicated, in BatchGetItem calls of at most 100 keys run in parallel;
// UnprocessedKeys are retried with capped jittered backoff until done or
// ctx ends.
func (b *Backend) BatchGetRow(ctx context.Context, reqs []*tablekit.GetRowRequest) ([]tablekit.GetRowResponse, error) {
	out := make([]tablekit.GetRowResponse, len(reqs))
	type slot struct {
		sk    string
		shard int
		idx   []int
	}
	type group struct {
		table string
		ti    *tableInfo
		slots []*slot
		bySK  map[string]*slot
	}
	groups := map[string]*group{}
	failed := map[string]error{} // tables whose metadata could not be read
	var order []string
	for i, r := range reqs {
		id := r.Meta.Name + "\x00" + r.Meta.Incarnation
		if err := failed[id]; err != nil {
			out[i].Err = err
			continue
		}
		g := groups[id]
		if g == nil {
			ti, err := b.info(ctx, r.Meta)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				failed[id] = err
				out[i].Err = err
				continue
			}
			g = &group{table: r.Meta.Name, ti: ti, bySK: map[string]*slot{}}
			groups[id] = g
			order = append(order, id)
		}
		sk, err := sortKey(r.Key)
		if err != nil {
			continue // not found: no row can be stored at this key
		}
		s := g.bySK[string(sk)]
		if s == nil {
			s = &slot{sk: string(sk), shard: g.ti.shardOf(r.Key[0].Value)}
			g.bySK[s.sk] = s
			g.slots = append(g.slots, s)
		}
		s.idx = append(s.idx, i)
	}
	type chunk struct {
		g     *group
		slots []*slot
	}
	var chunks []chunk
	for _, id := range order {
		g := groups[id]
		for lo := 0; lo < len(g.slots); lo += tablekit.MaxBatchGet {
			chunks = append(chunks, chunk{g: g, slots: g.slots[lo:min(lo+tablekit.MaxBatchGet, len(g.slots))]})
		}
	}
	err := driver.Parallel(ctx, len(chunks), b.opts.concurrency, func(ctx context.Context, c int) error {
		ch := chunks[c]
		keys := make([]map[string]types.AttributeValue, len(ch.slots))
		for i, s := range ch.slots {
			keys[i] = keyAttrs(s.shard, []byte(s.sk))
		}
		items, err := b.batchGet(ctx, ch.g.ti.native, keys)
		for _, s := range ch.slots {
			for _, i := range s.idx {
				if err != nil {
					out[i].Err = b.tableErr(ctx, err, ch.g.table, "BatchGetItem")
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

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
		if err := batchBackoff.Wait(ctx, attempt); err != nil {
			return nil, err
		}
		attempt++
	}
	return items, nil
}

// Range reads.
//
// A range inside one partition-key value is one Query on that value's
// shard; any other range is a merge of one Query stream per shard, each in
// sort-key order, fetched page by page: a stream's first page is small (its
// share of the rows wanted and a quarter more; firstPage), later pages
// double, and a stream's next page is requested in the background when its
// buffer runs low, so the merge rarely waits. Pages are sized by what the page may have to examine,
// not by the rows it still wants: a read with a filter (evaluated here, on
// the client; see the package doc) starts at filterPage items or more and
// its pages double up to the scan cap, so a page whose rows the filter
// mostly rejects costs a handful of Queries, not one per row. A GetRange
// call reads at most about Limit+1 items per stream plus the scan cap, never
// the whole range.

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
	startB, startExact := codec.Bound(req.Start)
	endB, endExact := codec.Bound(req.End)
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
		hi = codec.PrefixSuccessor(hi[:maxSortKeySize])
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
func pinnedShard(req *tablekit.GetRangeRequest, ti *tableInfo) int {
	if ti.shards == 1 {
		return 0
	}
	a, b := req.Start[0].Value, req.End[0].Value
	if a.IsInf() || b.IsInf() || !a.Equal(b) {
		return -1
	}
	return ti.shardOf(a)
}

// GetRange implements tablekit.Backend: a merger over the Query of each
// shard the range can touch, one shard when the bounds pin the partition
// key.
func (b *Backend) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	ti, err := b.info(ctx, req.Meta)
	if err != nil {
		return nil, err
	}
	page := &tablekit.GetRangeResponse{}
	rb := newBounds(req)
	if rb.empty {
		return page, nil
	}
	limit := max(req.Limit, 1)
	var shards []int
	if s := pinnedShard(req, ti); s >= 0 {
		shards = []int{s}
	} else {
		shards = make([]int, ti.shards)
		for i := range shards {
			shards[i] = i
		}
	}
	m := newMerger(ctx, b, ti.native, &rb, shards, limit+1, req.Read.Filter != nil) // one more item tells where the next page starts
	defer m.close()
	if err := m.start(); err != nil {
		return nil, b.tableErr(ctx, err, req.Meta.Name, "Query")
	}
	pr := newPageReader(req.Meta, &req.Read, req.Now)
	for {
		c := m.peek()
		if c == nil {
			return page, nil
		}
		key, err := codec.DecodeKey(req.Meta.Key, c.sk)
		if err != nil {
			return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "stored sort key of %d bytes does not decode", len(c.sk))
		}
		if len(page.Rows) >= limit || m.scanned >= maxScan {
			page.Next = key
			return page, nil
		}
		item := c.item
		if err := m.advance(); err != nil {
			return nil, b.tableErr(ctx, err, req.Meta.Name, "Query")
		}
		row, ok, err := pr.read(key, item)
		if err != nil {
			return nil, err
		}
		if ok {
			if page.Rows == nil {
				page.Rows = make([]tablekit.Row, 0, min(m.buffered()+1, limit))
			}
			page.Rows = append(page.Rows, row)
		}
	}
}

// merger is the N-way merge of one GetRange: a cursor per shard over that
// shard's Query, each in sort-key order, and a heap of the cursors that
// have an in-range item, ordered by that item's sort key (descending for a
// backward range), so that peek is the range's next item. A cursor fetches
// page by page: its first page is small (firstPage), later pages double,
// and its next page is requested in the background when its buffer runs
// low (expected), so the merge rarely waits. A GetRange reads at most about want items per cursor plus
// the scan cap, never the whole range.
type merger struct {
	b      *Backend
	ctx    context.Context    // the GetRange's context, which the Queries run under
	qctx   context.Context    // cancelled by close: a Query not yet sent is not sent
	cancel context.CancelFunc // cancels qctx
	native string
	rb     *rangeBounds
	want   int // items the page needs: its limit, plus one for Next
	// lossy is set when the page may drop many of the items it reads (a
	// filter): it may then examine up to the scan cap.
	lossy bool
	// scanned counts the items advanced past (the rows the page examined).
	scanned int
	all     []*cursor // every cursor, for close
	heap    []*cursor // the cursors with a current item, best at [0]
	// slots bounds the Queries in flight (the backend's Concurrency): a
	// range over 64 shards otherwise opens 64 connections at once, more
	// than the SDK's transport keeps idle per host (10), and pays a new
	// connection for most of them on every page.
	slots chan struct{}
}

// cursor is one shard's Query, consumed in sort-key order.
type cursor struct {
	shard   int
	items   []map[string]types.AttributeValue // the current page
	pos     int                               // the current item's index in items
	lek     map[string]types.AttributeValue   // where the next page starts
	done    bool                              // no more pages
	limit   int32                             // the next page's size
	pending chan pageResult                   // non-nil while a page is being fetched
	item    map[string]types.AttributeValue   // the current in-range item (items[pos])
	sk      []byte                            // its sort key
}

type pageResult struct {
	items []map[string]types.AttributeValue
	lek   map[string]types.AttributeValue
	err   error
}

// filterPage is the least first Query page of a range read with a filter
// (shared among the shards it touches).
const filterPage = 1024

// firstPage is the Limit of each shard's first Query when a page reads
// size items from n shards: a shard's share and a quarter more, and 8 (a
// shard's share of a uniformly hashed range varies by about its square
// root), at least 16. A shard that holds more of the range than that
// reads its next, larger page in the background once three quarters of
// the first are merged. (Twice the share, as before, read about twice the
// items a page returns, 1.3 times now with 4 shards; the reads cost more
// than the few extra Queries.)
func firstPage(size, n int) int {
	if n <= 1 {
		return size
	}
	share := (size + n - 1) / n
	return min(size, max(share+share/4+8, 16))
}

// earlierRangeTuning switches the merger back to the sizes and the
// unbounded Queries it had before firstPage and slots, so that a benchmark
// can compare both in one run (export_test.go).
var earlierRangeTuning atomic.Bool

func newMerger(ctx context.Context, b *Backend, native string, rb *rangeBounds, shards []int, want int, lossy bool) *merger {
	size := want
	if lossy {
		size = max(want, filterPage)
	}
	first, inFlight := firstPage(size, len(shards)), min(len(shards), b.opts.concurrency)
	if earlierRangeTuning.Load() {
		first, inFlight = size, len(shards)
		if len(shards) > 1 {
			first = min(size, max((2*size+len(shards)-1)/len(shards), 16))
		}
	}
	m := &merger{b: b, native: native, rb: rb, want: want, lossy: lossy, slots: make(chan struct{}, inFlight)}
	m.ctx = ctx
	m.qctx, m.cancel = context.WithCancel(ctx)
	m.all = make([]*cursor, len(shards))
	for i, sh := range shards {
		m.all[i] = &cursor{shard: sh, limit: int32(first)}
	}
	return m
}

// start fetches every cursor's first page (in parallel when there are
// several) and builds the heap.
func (m *merger) start() error {
	if len(m.all) > 1 {
		for _, c := range m.all {
			m.fetch(c)
		}
	}
	m.heap = make([]*cursor, 0, len(m.all))
	for _, c := range m.all {
		ok, err := m.head(c)
		if err != nil {
			return err
		}
		if ok {
			m.heap = append(m.heap, c)
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return nil
}

// peek returns the cursor whose current item comes next, or nil when the
// range is exhausted.
func (m *merger) peek() *cursor {
	if len(m.heap) == 0 {
		return nil
	}
	return m.heap[0]
}

// advance moves past peek's item and restores the heap.
func (m *merger) advance() error {
	c := m.heap[0]
	c.pos++
	m.scanned++
	ok, err := m.head(c)
	if err != nil {
		return err
	}
	if !ok {
		last := len(m.heap) - 1
		m.heap[0] = m.heap[last]
		m.heap[last] = nil
		m.heap = m.heap[:last]
	}
	if len(m.heap) > 0 {
		m.down(0)
	}
	return nil
}

// buffered returns how many fetched items the cursors hold, current ones
// included: a bound on the rows the page has at hand.
func (m *merger) buffered() int {
	n := 0
	for _, c := range m.all {
		n += len(c.items) - c.pos
	}
	return n
}

// close drops the pages still being fetched: a Query waiting for a slot
// is not sent, and one already sent finishes in the background (its
// goroutine then ends; the channel is buffered), unless the GetRange's own
// context ends. It does not abort a sent Query: that saves the page no
// time, costs the store the work anyway, and dynalite exits when a client
// drops a request it is still reading ("Error: aborted").
func (m *merger) close() {
	m.cancel()
}

// before reports whether a's item comes before b's in the walk's order.
func (m *merger) before(a, b *cursor) bool {
	return (bytes.Compare(a.sk, b.sk) < 0) != m.rb.backward
}

// down sifts heap[i] down to its place.
func (m *merger) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		best := l
		if r := l + 1; r < len(h) && m.before(h[r], h[l]) {
			best = r
		}
		if !m.before(h[best], h[i]) {
			return
		}
		h[i], h[best] = h[best], h[i]
		i = best
	}
}

// head makes c's current item its next in-range one, fetching pages as
// needed; ok is false when c has none left.
func (m *merger) head(c *cursor) (ok bool, err error) {
	for {
		for c.pos < len(c.items) {
			it := c.items[c.pos]
			sk := itemSortKey(it)
			switch m.rb.in(sk) {
			case 0:
				// Prefetch the next page when this one runs low.
				if left := len(c.items) - c.pos; !c.done && c.pending == nil && left <= len(c.items)/4 && left < m.expected() {
					m.fetch(c)
				}
				c.item, c.sk = it, sk
				return true, nil
			case 1: // past the far end: the cursor is done
				c.items, c.pos, c.done = nil, 0, true
				if c.pending != nil {
					<-c.pending
					c.pending = nil
				}
				c.item, c.sk = nil, nil
				return false, nil
			}
			c.pos++
		}
		if c.done && c.pending == nil {
			c.item, c.sk = nil, nil
			return false, nil
		}
		if err := m.next(c); err != nil {
			return false, err
		}
	}
}

// query runs c's next Query.
func (m *merger) query(c *cursor, limit int32) pageResult {
	cond, vals := m.rb.keyCondition(c.shard)
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(m.native),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#s": attrShard},
		ExpressionAttributeValues: vals,
		ScanIndexForward:          aws.Bool(!m.rb.backward),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(limit),
		ExclusiveStartKey:         c.lek,
	}
	if len(vals) > 1 {
		in.ExpressionAttributeNames["#k"] = attrKey
	}
	select {
	case m.slots <- struct{}{}:
	case <-m.qctx.Done():
		return pageResult{err: m.qctx.Err()}
	}
	out, err := m.b.client.Query(m.ctx, in)
	<-m.slots
	if err != nil {
		return pageResult{err: err}
	}
	return pageResult{items: out.Items, lek: out.LastEvaluatedKey}
}

// fetch requests c's next page in the background.
func (m *merger) fetch(c *cursor) {
	ch := make(chan pageResult, 1)
	c.pending = ch
	limit := m.pageLimit(c)
	go func() { ch <- m.query(c, limit) }()
}

// next makes c's next page current: the one being fetched, or, when none
// is, one fetched now (no goroutine: the merge waits for it anyway).
func (m *merger) next(c *cursor) error {
	var r pageResult
	if c.pending != nil {
		r = <-c.pending
		c.pending = nil
	} else {
		r = m.query(c, m.pageLimit(c))
	}
	if r.err != nil {
		return r.err
	}
	c.items, c.pos, c.lek = r.items, 0, r.lek
	c.done = len(r.lek) == 0
	c.limit = min(c.limit*2, int32(m.maxItems()))
	return nil
}

// maxItems is the most items a page may consume: its rows and Next, or with a
// filter the scan cap and Next.
func (m *merger) maxItems() int {
	if m.lossy {
		return max(m.want, maxScan+1)
	}
	return m.want
}

// pageLimit is the Limit of c's next Query: its page size, but with a
// filter no more than the scan cap leaves (items past it are never looked
// at).
func (m *merger) pageLimit(c *cursor) int32 {
	if !m.lossy {
		return c.limit
	}
	return min(c.limit, int32(max(m.need(), 1)))
}

// expected is how many more items the page may take from one cursor (a
// first page's worth of its share of what the page still needs): a cursor
// with fewer left prefetches its next page. Prefetching only then, rather
// than whenever a cursor has fewer than the whole page needs, keeps a
// range over many shards from reading pages at its end that it never
// merges.
func (m *merger) expected() int {
	return firstPage(m.need(), max(len(m.heap), 1))
}

// need is how many more items the page may consume.
func (m *merger) need() int {
	return m.maxItems() - m.scanned
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
	return tablekit.WrapError(tablekit.ErrUnavailable, err, "stored row %v", key)
}
