package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/internal/plainbuffer"
	"github.com/tablekit/tablekit/rowmodel"
)

// Local transactions (StartLocalTransaction, CommitTransaction,
// AbortTransaction; GetRow, GetRange, PutRow, UpdateRow, DeleteRow and
// BatchWriteRow carrying transaction_id), as the service documents them:
//
//   - StartLocalTransaction locks one partition key (the value of the
//     first primary-key column) of one table and answers a transaction id.
//     While it is held, a write to that partition key without the id is
//     refused with 409 OTSRowOperationConflict ("Data is being modified by
//     the other request."), and so is a second StartLocalTransaction on it;
//     StartLocalTransaction itself waits for the writes being applied
//     there. Reads without the id are not blocked and see only committed
//     data (Read Committed).
//   - Writes carrying the id must stay in the transaction's table and
//     partition key (else 400 OTSDataOutOfRange). Their conditions are
//     checked when they arrive, against the committed row with the
//     transaction's own earlier writes applied; cells without a version
//     get the server's time then, not at commit. They are kept in the
//     emulator (merged per row, an increment kept as the put of its
//     result) and are invisible to others until CommitTransaction, which
//     applies them all or none with one tablekit.Client.AtomicWrite over
//     the Backend's tablekit.AtomicWriter. A rejected write leaves the
//     transaction usable, as on the service.
//   - Reads carrying the id see the transaction's writes. The service
//     limits writes, not reads, to the transaction's partition key: a read
//     elsewhere sees committed data, as without the id.
//   - AbortTransaction discards the writes, and so do DeleteTable and the
//     admin reset for the transactions on their tables. A transaction idle
//     for longer than Options.TransactionTimeout (default 60 s, the
//     service's) on the server's clock is aborted; so a
//     tablekit.ManualClock in Options.Clock, or the admin clock, expires
//     transactions without waiting. Open transactions live in memory: a
//     restart aborts them. An unknown, finished or expired id is 404
//     OTSSessionNotExist ("Session not exist or may be timeout."); a
//     transaction serves one request at a time (409 OTSSessionBusy).
//     CommitTransaction ends the transaction whatever its outcome.
//
// Limits (a client cannot make the server hold more): at most
// Options.MaxTransactions open transactions (default
// DefaultMaxTransactions; past it 403 OTSQuotaExhausted), and per
// transaction at most MaxTransactionSize bytes of writes, counted as the
// service does (the size of each write request), and at most
// tablekit.MaxAtomicWrite distinct rows (the emulator's own limit: one
// AtomicWrite commits them); past either, 400
// OTSOutOfTransactionDataSizeLimit and the write is not kept.
//
// On a table with secondary indexes, commit moves the index rows after
// the rows, serialized with the table's other writes, as every write there
// does (index.go).
//
// Refused (400 OTSParameterInvalid): StartLocalTransaction over a Backend
// without atomic writes (tablekit.CapabilitiesOf(backend).AtomicWrite
// false), with the service's message for a table whose transactions are
// disabled; is_atomic with transaction_id. Every table accepts
// transactions: the emulator accepts CreateTable's enable_local_txn and
// does not model it. BatchGetRow has no transaction_id in the SDKs'
// messages: it reads committed data. The lock is the emulator's: a second
// server over the same Backend does not see it.

// DefaultTransactionTimeout is how long a local transaction may stay idle
// before the server aborts it (the service's 60 s).
const DefaultTransactionTimeout = 60 * time.Second

// DefaultMaxTransactions is the default of Options.MaxTransactions.
// With MaxTransactionSize it bounds the writes the server keeps for open
// transactions to 64 × 4 MB.
const DefaultMaxTransactions = 64

// MaxTransactionSize is the most data one local transaction writes (the
// service's 4 MB, counted as the sum of its write requests' sizes).
const MaxTransactionSize = 4 << 20

var (
	errSessionNotExist = &otsError{status: 404, code: "OTSSessionNotExist", msg: "Session not exist or may be timeout."}
	errSessionBusy     = &otsError{status: 409, code: "OTSSessionBusy", msg: "The last request on the transaction has not completed."}
	errRowConflict     = &otsError{status: 409, code: "OTSRowOperationConflict", msg: "Data is being modified by the other request."}
	errTxnIDInvalid    = paramErr("TransactionID is invalid.")
)

func errOutOfRange(format string, args ...any) *otsError {
	return &otsError{status: 400, code: "OTSDataOutOfRange", msg: fmt.Sprintf(format, args...)}
}

func errTxnSize(format string, args ...any) *otsError {
	return &otsError{status: 400, code: "OTSOutOfTransactionDataSizeLimit", msg: fmt.Sprintf(format, args...)}
}

// txnRegistry holds a server's open transactions and its locked partition
// keys.
type txnRegistry struct {
	mu    sync.Mutex
	byID  map[string]*txn
	parts map[string]*partition // by partID
}

// partition is one locked or written partition key: its transaction, and
// the writes without one being applied (which a StartLocalTransaction
// waits for).
type partition struct {
	owner    *txn
	inflight int
	drained  chan struct{} // closed when inflight reaches 0 (nil: nobody waits)
}

// txn is one open local transaction.
type txn struct {
	id       string
	table    string
	part     string           // partID
	pk       tablekit.KeyPart // the partition key
	lastUsed time.Time
	busy     bool
	size     int                // bytes of write requests taken
	rows     map[string]*txnRow // by encoded key
}

// txnRow is a row the transaction wrote: the one unconditional write that
// has the effect of all of them, applied at commit.
type txnRow struct {
	key tablekit.PrimaryKey
	bw  tablekit.BatchWrite
}

func partID(table string, pk tablekit.KeyPart) string {
	return table + "\x00" + string(codec.EncodeKey(tablekit.PrimaryKey{pk}))
}

func (s *Server) txnTimeout() time.Duration {
	if s.opts.TransactionTimeout > 0 {
		return s.opts.TransactionTimeout
	}
	return DefaultTransactionTimeout
}

// expiredLocked reports whether t has been idle past the timeout.
func (s *Server) expiredLocked(t *txn, now time.Time) bool {
	return !t.busy && now.Sub(t.lastUsed) > s.txnTimeout()
}

// endLocked forgets t and unlocks its partition key.
func (s *Server) endLocked(t *txn) {
	r := &s.txns
	delete(r.byID, t.id)
	if p := r.parts[t.part]; p != nil && p.owner == t {
		p.owner = nil
		if p.inflight == 0 {
			delete(r.parts, t.part)
		}
	}
}

// sweepLocked ends every expired transaction.
func (s *Server) sweepLocked(now time.Time) {
	for _, t := range s.txns.byID {
		if s.expiredLocked(t, now) {
			s.endLocked(t)
		}
	}
}

// endTableTxns aborts the open transactions on table (it was deleted).
func (s *Server) endTableTxns(table string) {
	s.txns.mu.Lock()
	defer s.txns.mu.Unlock()
	for _, t := range s.txns.byID {
		if t.table == table {
			s.endLocked(t)
		}
	}
}

// holdRow admits a write without a transaction to the partition key of
// key: refused while a transaction holds it; else the caller applies the
// write and then calls release. A StartLocalTransaction waits for held
// writes to be released.
func (s *Server) holdRow(table string, key tablekit.PrimaryKey) (release func(), _ *otsError) {
	id := partID(table, key[0])
	r := &s.txns
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.parts[id]
	if p != nil && p.owner != nil {
		if !s.expiredLocked(p.owner, s.clock.Now()) {
			return nil, errRowConflict
		}
		s.endLocked(p.owner)
		p = r.parts[id]
	}
	if p == nil {
		if r.parts == nil {
			r.parts = map[string]*partition{}
		}
		p = &partition{}
		r.parts[id] = p
	}
	p.inflight++
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		p.inflight--
		if p.inflight == 0 {
			if p.drained != nil {
				close(p.drained)
				p.drained = nil
			}
			if p.owner == nil && r.parts[id] == p {
				delete(r.parts, id)
			}
		}
	}, nil
}

// heldRows are the rows of one request admitted by holdRow, released
// together once the request's writes are applied.
type heldRows struct{ releases []func() }

func (h *heldRows) hold(s *Server, table string, key tablekit.PrimaryKey) *otsError {
	rel, oe := s.holdRow(table, key)
	if oe == nil {
		h.releases = append(h.releases, rel)
	}
	return oe
}

func (h *heldRows) release() {
	for _, r := range h.releases {
		r()
	}
	h.releases = nil
}

// useTxn finds the open transaction id and marks it busy for one request;
// the caller ends the request with doneTxn.
func (s *Server) useTxn(id string) (*txn, *otsError) {
	if id == "" {
		return nil, errTxnIDInvalid
	}
	r := &s.txns
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.byID[id]
	if t == nil {
		return nil, errSessionNotExist
	}
	if s.expiredLocked(t, s.clock.Now()) {
		s.endLocked(t)
		return nil, errSessionNotExist
	}
	if t.busy {
		return nil, errSessionBusy
	}
	t.busy = true
	return t, nil
}

// doneTxn ends a request of t: its idle time starts now.
func (s *Server) doneTxn(t *txn) {
	s.txns.mu.Lock()
	t.busy = false
	t.lastUsed = s.clock.Now()
	s.txns.mu.Unlock()
}

// newTxnID returns an id in the service's form: base64 of the table name,
// a random session number and the partition key, each length-prefixed.
func newTxnID(table string, pk tablekit.KeyPart) string {
	n1, _ := rand.Int(rand.Reader, big.NewInt(1e15))
	n2, _ := rand.Int(rand.Reader, big.NewInt(1e14))
	session := fmt.Sprintf("%d-%d", n1, n2)
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, uint32(len(table)))
	b = append(b, table...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(session)))
	b = append(b, session...)
	b = append(b, codec.EncodeKey(tablekit.PrimaryKey{pk})...)
	return base64.StdEncoding.EncodeToString(b)
}

// consumedWrite1 is the ConsumedCapacity (one write unit) the service
// sends with the answers of the three transaction calls, as field fieldNum
// of a message the SDK's descriptor does not give it.
func consumedWrite1(fieldNum protowire.Number) []byte {
	c, _ := proto.Marshal(capacity(0, 1))
	b := protowire.AppendTag(nil, fieldNum, protowire.BytesType)
	return protowire.AppendBytes(b, c)
}

func (s *Server) startLocalTransaction(ctx context.Context, body []byte) (proto.Message, error) {
	req, meta, err := decodeTableRequest[otsprotocol.StartLocalTransactionRequest](ctx, s, body)
	if err != nil {
		return nil, err
	}
	if !tablekit.CapabilitiesOf(s.backend).AtomicWrite {
		return nil, paramErr("Try to call method using explicit transaction on explicit-transaction-disabled table: the tablekit Tablestore emulator's Backend cannot write several rows atomically (tablekit Capabilities.AtomicWrite is false), so table '%s' has no local transactions.", meta.Name)
	}
	if s.extra(meta.Name).idx.baseOf != "" {
		return nil, errIndexWrite(meta.Name)
	}
	for _, kc := range meta.Key {
		if kc.AutoIncrement { // as on the service: not with auto-increment keys
			return nil, paramErr("Local transactions are not supported on table '%s', whose primary key column '%s' is AUTO_INCREMENT.", meta.Name, kc.Name)
		}
	}
	row, err := plainbuffer.DecodeRow(req.Key)
	if err != nil {
		return nil, paramErr("%s", err.Error())
	}
	if len(row.PrimaryKey) != 1 {
		return nil, paramErr("StartLocalTransaction support only one primary key.")
	}
	if len(row.Columns) > 0 || row.DeleteMarker {
		return nil, paramErr("StartLocalTransaction takes the partition key only.")
	}
	part := *meta
	part.Key = meta.Key[:1]
	key, oe := checkKey(&part, row.PrimaryKey, false)
	if oe != nil {
		return nil, oe
	}
	t, oe := s.beginTxn(ctx, meta.Name, key[0])
	if oe != nil {
		return nil, oe
	}
	return &otsprotocol.StartLocalTransactionResponse{TransactionId: proto.String(t.id), XXX_unrecognized: consumedWrite1(2)}, nil
}

// beginTxn registers a transaction on the partition key pk of table,
// waiting for the writes without a transaction being applied there.
func (s *Server) beginTxn(ctx context.Context, table string, pk tablekit.KeyPart) (*txn, *otsError) {
	r := &s.txns
	r.mu.Lock()
	now := s.clock.Now()
	s.sweepLocked(now)
	limit := s.opts.MaxTransactions
	if limit <= 0 {
		limit = DefaultMaxTransactions
	}
	if len(r.byID) >= limit {
		r.mu.Unlock()
		return nil, &otsError{status: 403, code: "OTSQuotaExhausted", msg: fmt.Sprintf(
			"Too many open local transactions: the tablekit Tablestore emulator keeps at most %d (Options.MaxTransactions); commit or abort one, or wait for one to time out.", limit)}
	}
	id := partID(table, pk)
	p := r.parts[id]
	if p != nil && p.owner != nil {
		r.mu.Unlock()
		return nil, errRowConflict
	}
	if p == nil {
		if r.parts == nil {
			r.parts = map[string]*partition{}
		}
		p = &partition{}
		r.parts[id] = p
	}
	if r.byID == nil {
		r.byID = map[string]*txn{}
	}
	tid := newTxnID(table, pk)
	for r.byID[tid] != nil {
		tid = newTxnID(table, pk)
	}
	t := &txn{id: tid, table: table, part: id, pk: pk, lastUsed: now, busy: true, rows: map[string]*txnRow{}}
	r.byID[t.id] = t
	p.owner = t
	var wait chan struct{}
	if p.inflight > 0 {
		if p.drained == nil {
			p.drained = make(chan struct{})
		}
		wait = p.drained
	}
	r.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			r.mu.Lock()
			s.endLocked(t)
			r.mu.Unlock()
			return nil, toOTS(ctx.Err())
		}
	}
	s.doneTxn(t)
	return t, nil
}

func (s *Server) commitTransaction(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.CommitTransactionRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	t, oe := s.useTxn(req.GetTransactionId())
	if oe != nil {
		return nil, oe
	}
	// The transaction ends whatever the outcome: its partition key is
	// unlocked once its writes are applied, or failed to be.
	defer func() {
		s.txns.mu.Lock()
		s.endLocked(t)
		s.txns.mu.Unlock()
	}()
	if err := s.commitRows(ctx, t); err != nil {
		return nil, err
	}
	return &otsprotocol.CommitTransactionResponse{XXX_unrecognized: consumedWrite1(1)}, nil
}

// commitRows applies the writes of t all or none. On a table with
// secondary indexes its writes are serialized with the table's others and
// the index rows move after the rows, as for every write there.
func (s *Server) commitRows(ctx context.Context, t *txn) error {
	if len(t.rows) == 0 {
		return nil
	}
	rows := make([]*txnRow, 0, len(t.rows))
	for _, r := range t.rows {
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return tablekit.CompareKeys(rows[i].key, rows[j].key) < 0 })
	writes := make([]tablekit.BatchWrite, len(rows))
	for i, r := range rows {
		writes[i] = r.bw
	}
	idx := s.extra(t.table).idx
	if !idx.indexed() {
		_, err := s.client.AtomicWrite(ctx, writes)
		return err
	}
	idx.mu.Lock()
	defer idx.mu.Unlock()
	old := make([]rowState, len(rows))
	for i, r := range rows {
		var err error
		if old[i], err = s.latestRow(ctx, t.table, r.key); err != nil {
			return err
		}
	}
	if _, err := s.client.AtomicWrite(ctx, writes); err != nil {
		return err
	}
	for i, r := range rows {
		cur, err := s.latestRow(ctx, t.table, r.key)
		if err != nil {
			return err
		}
		if err := s.syncIndexes(ctx, idx.metas, r.key, old[i], cur); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) abortTransaction(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.AbortTransactionRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	t, oe := s.useTxn(req.GetTransactionId())
	if oe != nil {
		return nil, oe
	}
	s.txns.mu.Lock()
	s.endLocked(t)
	s.txns.mu.Unlock()
	return &otsprotocol.AbortTransactionResponse{XXX_unrecognized: consumedWrite1(1)}, nil
}

// inTxn checks that a request of transaction t names its table and its
// partition key.
func (t *txn) inTxn(table string, key tablekit.PrimaryKey) *otsError {
	if table != t.table {
		return errOutOfRange("Table '%s' is out of the range of the transaction, which is on table '%s'.", table, t.table)
	}
	if len(key) == 0 || key[0].Name != t.pk.Name || !key[0].Value.Equal(t.pk.Value) {
		return errOutOfRange("The primary key is out of the range of the transaction: its %s must be %v.", t.pk.Name, t.pk.Value)
	}
	return nil
}

// txnSingleWrite serves a PutRow, UpdateRow or DeleteRow carrying a
// transaction id.
func (s *Server) txnSingleWrite(ctx context.Context, id, table string, op otsprotocol.OperationType, change []byte, cond *otsprotocol.Condition, rc *otsprotocol.ReturnContent) (*otsprotocol.ConsumedCapacity, []byte, error) {
	t, oe := s.useTxn(id)
	if oe != nil {
		return nil, nil, oe
	}
	defer s.doneTxn(t)
	meta, oe := s.meta(ctx, table)
	if oe != nil {
		return nil, nil, oe
	}
	now := s.now()
	w, oe := s.decodeRowWrite(meta, op, change, cond, rc, now)
	if oe != nil {
		return nil, nil, oe
	}
	if oe := t.inTxn(meta.Name, w.key); oe != nil {
		return nil, nil, oe
	}
	incs, err := s.txnApply(ctx, t, meta, w, now)
	if err != nil {
		return nil, nil, err
	}
	return capacity(writeCapacity(w, false)), w.returned(incs), nil
}

// txnApply takes write w into transaction t (busy for this request):
// checks its condition against the row as the transaction sees it and
// keeps its effect, merged with the transaction's earlier writes of the
// row. It returns the write's increments.
func (s *Server) txnApply(ctx context.Context, t *txn, meta *tablekit.TableMeta, w *write, now int64) ([]tablekit.Column, error) {
	if t.size+w.sizeBytes > MaxTransactionSize {
		return nil, errTxnSize("The data written in the transaction would reach %d bytes; the limit is %d bytes.", t.size+w.sizeBytes, MaxTransactionSize)
	}
	kid := string(codec.EncodeKey(w.key))
	prev := t.rows[kid]
	if prev == nil && len(t.rows) >= tablekit.MaxAtomicWrite {
		return nil, errTxnSize("The transaction already writes %d rows, the most the tablekit Tablestore emulator commits in one transaction.", tablekit.MaxAtomicWrite)
	}
	view, err := s.txnView(ctx, meta, prev, w.key, now)
	if err != nil {
		return nil, err
	}
	next := w.bw
	// Cells get their versions now, when written into the transaction.
	next.Columns = slices.Clone(next.Columns)
	for i, c := range next.Columns {
		if c.Version == 0 {
			next.Columns[i].Version = now
		}
	}
	next.Changes = slices.Clone(next.Changes)
	for i, c := range next.Changes {
		if c.Kind == tablekit.ChangePut && c.Version == 0 {
			next.Changes[i].Version = now
		}
	}
	_, res, err := rowmodel.Apply(view, &tablekit.WriteRequest{Meta: meta, Kind: next.Kind, Key: w.key,
		Columns: next.Columns, Changes: next.Changes, Condition: next.Condition, Now: now})
	if err != nil {
		return nil, condError(next.Condition, err)
	}
	next.Condition = tablekit.Condition{}
	var incs []tablekit.Column
	if res != nil {
		incs = res.Increments
	}
	if hasIncrement(next.Changes) {
		// An increment is kept as the put of its result: the row cannot
		// change under the transaction, so commit writes what it returned.
		i := 0
		for j, c := range next.Changes {
			if c.Kind == tablekit.ChangeIncrement && i < len(incs) {
				next.Changes[j] = tablekit.PutAt(c.Column, incs[i].Value, incs[i].Version)
				i++
			}
		}
	}
	if prev != nil {
		merged, oe := mergeWrites(meta, prev.bw, next, now)
		if oe != nil {
			return nil, oe
		}
		next = merged
	}
	t.rows[kid] = &txnRow{key: w.key, bw: next}
	t.size += w.sizeBytes
	return incs, nil
}

// txnView returns the row at key as a transaction sees it: the committed
// row with the transaction's write of it (prev, nil when none) applied;
// nil when absent.
func (s *Server) txnView(ctx context.Context, meta *tablekit.TableMeta, prev *txnRow, key tablekit.PrimaryKey, now int64) (*rowmodel.Row, error) {
	r, found, err := s.client.Table(meta.Name).GetRow(ctx, key, tablekit.MaxVersions(math.MaxInt32))
	if err != nil {
		return nil, err
	}
	var base *rowmodel.Row
	if found {
		cells := slices.Clone(r.Columns)
		rowmodel.SortCells(cells)
		base = &rowmodel.Row{Cells: cells, Marker: len(cells) == 0}
	}
	if prev == nil {
		return base, nil
	}
	bw := prev.bw
	row, _, err := rowmodel.Apply(base, &tablekit.WriteRequest{Meta: meta, Kind: bw.Kind, Key: key, Columns: bw.Columns, Changes: bw.Changes, Now: now})
	return row, err
}

// readRow serves GetRow's read: through the client, or, with a
// transaction id, as that transaction sees the row.
func (s *Server) readRow(ctx context.Context, id *string, meta *tablekit.TableMeta, key tablekit.PrimaryKey, rs *readSpec) (tablekit.Row, bool, error) {
	if id == nil {
		return s.client.Table(meta.Name).GetRow(ctx, key, rs.opts...)
	}
	t, oe := s.useTxn(*id)
	if oe != nil {
		return tablekit.Row{}, false, oe
	}
	defer s.doneTxn(t)
	var prev *txnRow
	if meta.Name == t.table {
		prev = t.rows[string(codec.EncodeKey(key))]
	}
	if prev == nil {
		return s.client.Table(meta.Name).GetRow(ctx, key, rs.opts...)
	}
	now := s.now()
	view, err := s.txnView(ctx, meta, prev, key, now)
	if err != nil {
		return tablekit.Row{}, false, err
	}
	cols, found := rowmodel.Read(view, meta.Options, &rs.spec, now)
	return tablekit.Row{Key: key, Columns: cols}, found, nil
}

// readRange serves GetRange's page: from the Backend, or, with a
// transaction id, with the rows that transaction wrote in the page's span
// as it sees them.
func (s *Server) readRange(ctx context.Context, id *string, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	if id == nil {
		return s.rangePage(ctx, req)
	}
	t, oe := s.useTxn(*id)
	if oe != nil {
		return nil, oe
	}
	defer s.doneTxn(t)
	page, err := s.rangePage(ctx, req)
	if err != nil || len(t.rows) == 0 || req.Meta.Name != t.table {
		return page, err
	}
	// The span the page covers: from Start to Next (exclusive), or to End.
	stop := req.End
	if page.Next != nil {
		stop = page.Next
	}
	in := func(k tablekit.PrimaryKey) bool {
		if req.Backward {
			return tablekit.CompareKeys(k, req.Start) <= 0 && tablekit.CompareKeys(k, stop) > 0
		}
		return tablekit.CompareKeys(k, req.Start) >= 0 && tablekit.CompareKeys(k, stop) < 0
	}
	var mine []*txnRow
	for _, r := range t.rows {
		if in(r.key) {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		return page, nil
	}
	rows := slices.DeleteFunc(slices.Clone(page.Rows), func(r tablekit.Row) bool {
		return slices.ContainsFunc(mine, func(m *txnRow) bool { return m.key.Equal(r.Key) })
	})
	for _, m := range mine {
		view, err := s.txnView(ctx, req.Meta, m, m.key, req.Now)
		if err != nil {
			return nil, err
		}
		if cols, found := rowmodel.Read(view, req.Meta.Options, &req.Read, req.Now); found {
			rows = append(rows, tablekit.Row{Key: m.key, Columns: cols})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		c := tablekit.CompareKeys(rows[i].Key, rows[j].Key)
		if req.Backward {
			return c > 0
		}
		return c < 0
	})
	out := &tablekit.GetRangeResponse{Rows: rows, Next: page.Next}
	if req.Limit > 0 && len(rows) > req.Limit {
		out.Rows, out.Next = rows[:req.Limit], rows[req.Limit].Key
	}
	return out, nil
}

// txnBatchWriteRow serves a BatchWriteRow carrying a transaction id: each
// row is taken into the transaction in order, with its own result; rows of
// another table or partition key fail with OTSDataOutOfRange.
func (s *Server) txnBatchWriteRow(ctx context.Context, req *otsprotocol.BatchWriteRowRequest) (proto.Message, error) {
	if req.GetIsAtomic() {
		return nil, unsupported("is_atomic with transaction_id")
	}
	t, oe := s.useTxn(req.GetTransactionId())
	if oe != nil {
		return nil, oe
	}
	defer s.doneTxn(t)
	if _, oe := writeRowCount(req); oe != nil {
		return nil, oe
	}
	resp := &otsprotocol.BatchWriteRowResponse{Tables: make([]*otsprotocol.TableInBatchWriteRowResponse, len(req.Tables))}
	metas := make([]*tablekit.TableMeta, len(req.Tables))
	for ti, tb := range req.Tables {
		resp.Tables[ti] = &otsprotocol.TableInBatchWriteRowResponse{
			TableName: proto.String(tb.GetTableName()),
			Rows:      make([]*otsprotocol.RowInBatchWriteRowResponse, len(tb.Rows)),
		}
		meta, oe := s.meta(ctx, tb.GetTableName())
		if oe == errNoTable || (oe != nil && oe.status >= 500) {
			return nil, oe
		}
		if oe == nil && meta.Name != t.table {
			oe = errOutOfRange("Table '%s' is out of the range of the transaction, which is on table '%s'.", meta.Name, t.table)
		}
		if oe != nil {
			for ri := range tb.Rows {
				resp.Tables[ti].Rows[ri] = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: oe.proto()}
			}
			continue
		}
		metas[ti] = meta
	}
	now := s.now()
	seen := map[string]bool{}
	for ti, tb := range req.Tables {
		meta := metas[ti]
		if meta == nil {
			continue
		}
		for ri, r := range tb.Rows {
			w, oe := s.decodeRowWrite(meta, r.GetType(), r.RowChange, r.Condition, r.ReturnContent, now)
			if oe == nil {
				if dupKey(seen, meta.Name, w.key) {
					return nil, errDuplicateRow
				}
				oe = t.inTxn(meta.Name, w.key)
			}
			var out *otsprotocol.RowInBatchWriteRowResponse
			if oe == nil {
				incs, err := s.txnApply(ctx, t, meta, w, now)
				if err != nil {
					if oe = toOTS(err); oe.status >= 500 {
						return nil, err
					}
				} else {
					out = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(true), Consumed: capacity(writeCapacity(w, false)), Row: w.returned(incs)}
				}
			}
			if oe != nil {
				out = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: oe.proto()}
			}
			resp.Tables[ti].Rows[ri] = out
		}
	}
	return resp, nil
}
