package fileengine

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/internal/enginekit"
	"github.com/tablekit/tablekit/internal/feedwake"
	"github.com/tablekit/tablekit/rowmodel"
)

// ErrLocked is what the error of an Open matches when another Engine, in
// this process or another, has the directory open.
var ErrLocked = errors.New("fileengine: directory is locked by another open engine")

// ErrCorrupt is what an error matches when the store's data failed a
// checksum or does not decode: the engine never returns such data.
var ErrCorrupt = errors.New("fileengine: corrupt data")

// maxScan bounds how many stored rows one GetRange page examines.
const maxScan = tablekit.MaxScanRows

// stripes is the number of per-row write mutexes.
const stripes = 1024

// Options configure Open. The zero Options (or nil) is the durable default.
type Options struct {
	// NoSync commits writes without waiting for the WAL's fsync: faster,
	// but a machine crash may lose the last acknowledged writes (never a
	// part of one). The death of the process alone loses nothing
	// acknowledged. See the package documentation.
	NoSync bool
	// MustExist makes Open fail, with an error matching fs.ErrNotExist and
	// tablekit.ErrInvalidArgument, when dir holds no store yet, instead of
	// creating one.
	MustExist bool
	// CacheSize is the size in bytes of pebble's block cache; 0 means
	// 64 MiB.
	CacheSize int64
	// Logf, if set, receives pebble's error messages (informational ones
	// are dropped).
	Logf func(format string, args ...any)

	// fs, if set (by tests), is the file system pebble uses instead of
	// vfs.Default.
	fs vfs.FS
}

// Engine is a tablekit.Backend stored in one directory.
type Engine struct {
	dir   string
	db    *pebble.DB
	lock  *pebble.Lock
	wo    *pebble.WriteOptions
	seed  maphash.Seed
	locks [stripes]sync.Mutex

	// ops is held shared by every call while it uses db, and alone by
	// Close, so that Close waits for calls in flight and later calls see
	// closed.
	ops    sync.RWMutex
	closed bool

	// failed is set, for good, by the first commit that pebble found fatal
	// (see commit).
	failed atomic.Pointer[error]

	mu     sync.Mutex // guards tables; taken after a table's mu, never before
	tables map[string]*table
}

// table is one table's in-memory state: its authoritative meta (a copy of
// the stored record) and the lock that orders its operations.
type table struct {
	mu      sync.RWMutex
	meta    tablekit.TableMeta
	rows    string // the rows id (see codec.go): the Incarnation, or one of its own
	prefix  []byte // rowsPrefix(rows)
	top     []byte // the successor of prefix: the upper bound of every row
	deleted bool   // set, under mu, when DeleteTable removed it

	// feed is the change feed (feed.go); nil when never enabled.
	feed *fileFeed
	// ai is the auto-increment state (autoinc.go); nil without such a column.
	ai *autoInc
	// wake closes for the feed's followers as its records commit (feed.go).
	wake feedwake.Signal
}

// newTable returns the in-memory state of the table m describes, whose
// rows id is rows.
func newTable(m tablekit.TableMeta, rows string) *table {
	p := rowsPrefix(rows)
	return &table{meta: m, rows: rows, prefix: p, top: codec.PrefixSuccessor(p), ai: newAutoInc(&m)}
}

// Open opens the store in dir, creating the directory and an empty store
// when there is none (unless opts.MustExist). See the package
// documentation for the errors it returns.
func Open(dir string, opts *Options) (*Engine, error) {
	if opts == nil {
		opts = &Options{}
	}
	if dir == "" {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "fileengine: empty directory name")
	}
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return nil, tablekit.WrapError(tablekit.ErrInvalidArgument, &fs.PathError{Op: "open", Path: dir, Err: syscall.ENOTDIR}, "fileengine: %q is not a directory", dir)
	case errors.Is(err, fs.ErrNotExist) && opts.MustExist:
		return nil, tablekit.WrapError(tablekit.ErrInvalidArgument, err, "fileengine: no store in %q", dir)
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fsError(err, "fileengine: create directory %q", dir)
		}
	case err != nil:
		return nil, fsError(err, "fileengine: open %q", dir)
	}
	lock, err := pebble.LockDirectory(dir, vfs.Default)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fsError(err, "fileengine: lock %q", dir)
		}
		return nil, tablekit.WrapError(tablekit.ErrUnavailable, fmt.Errorf("%w: %s: %w", ErrLocked, dir, err), "fileengine: %q is open elsewhere", dir)
	}
	if err := checkSpace(dir); err != nil {
		_ = lock.Close()
		return nil, err
	}
	cache := opts.CacheSize
	if cache <= 0 {
		cache = 64 << 20
	}
	c := pebble.NewCache(cache)
	defer c.Unref()
	po := &pebble.Options{
		Cache:            c,
		Lock:             lock,
		Logger:           logger{opts.Logf},
		ErrorIfNotExists: opts.MustExist,
		// Corruption found by a read is that read's error (pebble's default
		// is a fatal log message).
		EventListener: &pebble.EventListener{DataCorruption: func(info pebble.DataCorruptionInfo) {
			if opts.Logf != nil {
				opts.Logf("fileengine: corruption in %s: %v", info.Path, info.Details)
			}
		}},
	}
	if opts.fs != nil {
		po.FS = opts.fs
	}
	if opts.NoSync {
		po.FS = walNoSyncFS{cmp.Or(po.FS, vfs.Default)} // see nosync.go
	}
	po.EnsureDefaults()
	db, err := pebble.Open(dir, po)
	if err != nil {
		_ = lock.Close()
		if opts.MustExist && !pebble.IsCorruptionError(err) {
			var pe *fs.PathError
			if !errors.As(err, &pe) {
				return nil, tablekit.WrapError(tablekit.ErrInvalidArgument, fmt.Errorf("%w: %w", fs.ErrNotExist, err), "fileengine: no store in %q", dir)
			}
		}
		if !pebble.IsCorruptionError(err) && strings.Contains(err.Error(), "object size mismatch") {
			// A table file shorter or longer than the MANIFEST says: pebble's
			// consistency check at Open does not mark it as corruption.
			err = fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		return nil, storeError(err, "fileengine: open %q", dir)
	}
	// With NoSync too: a commit waits until its log record is written to
	// the file, whose sync walNoSyncFS makes a no-op.
	e := &Engine{dir: dir, db: db, lock: lock, wo: pebble.Sync, seed: maphash.MakeSeed(), tables: map[string]*table{}}
	if err := e.load(); err != nil {
		_ = db.Close()
		_ = lock.Close()
		return nil, err
	}
	return e, nil
}

// openReserve is the free space Open wants beyond the write-ahead logs it
// replays: room for the new log and MANIFEST and a margin.
const openReserve = 1 << 20

// checkSpace refuses to open a store on a file system too full to replay
// its logs: pebble flushes what it replays before Open returns, and on a
// full disk retries that flush for ever, so Open would never return. It
// returns an error matching syscall.ENOSPC and tablekit.ErrUnavailable
// naming the directory and the sizes. Where free space cannot be read, it
// lets Open go on.
func checkSpace(dir string) error {
	avail, ok := freeSpace(dir)
	if !ok {
		return nil
	}
	need := int64(openReserve)
	entries, _ := os.ReadDir(dir)
	for _, ent := range entries {
		if strings.HasSuffix(ent.Name(), ".log") {
			if fi, err := ent.Info(); err == nil {
				need += fi.Size()
			}
		}
	}
	if avail < need {
		return tablekit.WrapError(tablekit.ErrUnavailable, &fs.PathError{Op: "open", Path: dir, Err: syscall.ENOSPC},
			"fileengine: %q: %d bytes free, opening needs %d (the logs to replay and a margin)", dir, avail, need)
	}
	return nil
}

// load checks the format record (writing it into a new store) and reads
// every table's metadata.
func (e *Engine) load() error {
	v, closer, err := e.db.Get([]byte(formatKey))
	switch {
	case err == nil:
		ok := string(v) == formatValue
		got := len(v)
		_ = closer.Close()
		if !ok {
			return tablekit.WrapError(tablekit.ErrUnavailable, ErrCorrupt, "fileengine: %q holds a store of another format (%d-byte format record)", e.dir, got)
		}
	case errors.Is(err, pebble.ErrNotFound):
		it, err := e.db.NewIter(nil)
		if err != nil {
			return storeError(err, "fileengine: open %q", e.dir)
		}
		empty := !it.First()
		err = it.Close()
		if err != nil {
			return storeError(err, "fileengine: open %q", e.dir)
		}
		if !empty {
			return tablekit.Errorf(tablekit.ErrInvalidArgument, "fileengine: %q holds a pebble store that is not a fileengine store", e.dir)
		}
		if err := e.db.Set([]byte(formatKey), []byte(formatValue), pebble.Sync); err != nil {
			return storeError(err, "fileengine: initialize %q", e.dir)
		}
	default:
		return storeError(err, "fileengine: open %q", e.dir)
	}
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: []byte{metaPrefix}, UpperBound: []byte{metaPrefix + 1}})
	if err != nil {
		return storeError(err, "fileengine: open %q", e.dir)
	}
	for ok := it.First(); ok; ok = it.Next() {
		m, rows, err := decodeMeta(it.Value())
		if err != nil {
			_ = it.Close()
			return tablekit.WrapError(tablekit.ErrUnavailable, err, "fileengine: %q: table %q", e.dir, it.Key()[1:])
		}
		t := newTable(m, rows)
		if err := e.loadFeed(t); err != nil {
			_ = it.Close()
			return tablekit.WrapError(tablekit.ErrUnavailable, err, "fileengine: %q: table %q", e.dir, m.Name)
		}
		e.tables[m.Name] = t
	}
	if err := it.Close(); err != nil {
		return storeError(err, "fileengine: open %q", e.dir)
	}
	return nil
}

// Dir returns the directory the engine was opened on.
func (e *Engine) Dir() string { return e.dir }

// Close flushes the memtable, closes the store and releases the
// directory's lock. It waits for calls in flight; later calls fail with
// tablekit.ErrUnavailable. Closing twice is a no-op.
func (e *Engine) Close() error {
	e.ops.Lock()
	defer e.ops.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var err error
	if f := e.failed.Load(); f != nil {
		// The commit pipeline is stuck: a flush would wait for it. What the
		// memtable holds is in the log, which the next Open replays.
		err = *f
	} else {
		err = e.db.Flush()
	}
	err = errors.Join(err, e.closeDB())
	err = errors.Join(err, e.lock.Close())
	e.mu.Lock()
	e.tables = nil
	e.mu.Unlock()
	if err != nil {
		return storeError(err, "fileengine: close %q", e.dir)
	}
	return nil
}

// closeDB closes pebble, recovering the panic of its Fatalf, if any (a
// failed store may report one while closing).
func (e *Engine) closeDB() (err error) {
	defer func() {
		if p := recover(); p != nil {
			f, ok := p.(*fatal)
			if !ok {
				panic(p)
			}
			err = f
		}
	}()
	return e.db.Close()
}

// begin starts a call: it holds ops shared until the returned end.
func (e *Engine) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e.ops.RLock()
	if e.closed {
		e.ops.RUnlock()
		return tablekit.Errorf(tablekit.ErrUnavailable, "fileengine: the engine of %q is closed", e.dir)
	}
	return nil
}

func (e *Engine) end() { e.ops.RUnlock() }

// table returns the named table, or ErrTableNotFound.
func (e *Engine) table(name string) (*table, error) {
	e.mu.Lock()
	t, ok := e.tables[name]
	e.mu.Unlock()
	if !ok {
		return nil, tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	return t, nil
}

// using starts a call on the table m (a request's meta) addresses: it
// begins the call and returns the table with its mu held shared, once
// current has checked it. The caller ends both (t.mu.RUnlock, e.end);
// on an error, neither is held.
func (e *Engine) using(ctx context.Context, m *tablekit.TableMeta) (*table, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	t, err := e.table(m.Name)
	if err == nil {
		t.mu.RLock()
		if err = t.current(m); err != nil {
			t.mu.RUnlock()
		}
	}
	if err != nil {
		e.end()
		return nil, err
	}
	return t, nil
}

// current checks, under t.mu, that t is still stored and that m (a
// request's meta) addresses this incarnation of it.
func (t *table) current(m *tablekit.TableMeta) error {
	if t.deleted {
		return tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", m.Name)
	}
	if m.Incarnation != t.meta.Incarnation {
		return driver.Stale("table %q was deleted and created again since the request's metadata was read", m.Name)
	}
	return nil
}

// CreateTable implements tablekit.Backend. It stores a copy of meta and
// reports it as given, Incarnation included (an empty one too: see
// codec.go for where such a table's rows live). An Incarnation another
// table has is refused: the Client makes a new random one for each table.
func (e *Engine) CreateTable(ctx context.Context, meta *tablekit.TableMeta) error {
	return e.createTable(ctx, meta, nil)
}

// createTable creates the table, its change feed on if feed is set (in the
// same batch).
func (e *Engine) createTable(ctx context.Context, meta *tablekit.TableMeta, feed *tablekit.SetChangeFeedRequest) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	defer e.end()
	m := *meta
	m.Key = slices.Clone(meta.Key)
	if len(m.Incarnation) > 255 {
		return tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: incarnation of %d bytes (at most 255)", m.Name, len(m.Incarnation))
	}
	rows := m.Incarnation
	if rows == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		rows = "-" + hex.EncodeToString(b[:]) // never a Client's Incarnation (hex digits)
	}
	val, err := encodeMeta(&m, rows)
	if err != nil {
		return tablekit.WrapError(tablekit.ErrInvalidArgument, err, "table %q: metadata", m.Name)
	}
	t := newTable(m, rows)
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.tables[m.Name]; ok {
		return tablekit.Errorf(tablekit.ErrAlreadyExists, "table %q already exists", m.Name)
	}
	for _, o := range e.tables {
		if o.rows == rows {
			return tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: incarnation %q is table %q's", m.Name, m.Incarnation, o.meta.Name)
		}
	}
	b := e.db.NewBatch()
	defer b.Close()
	// Rows of an earlier table with this rows id (there are none unless a
	// caller reuses an Incarnation) must not reappear.
	_ = b.DeleteRange(t.prefix, t.top, nil)
	_ = b.DeleteRange(aiTablePrefix(rows), codec.PrefixSuccessor(aiTablePrefix(rows)), nil)
	_ = b.Set(metaKey(m.Name), val, nil)
	if feed != nil {
		t.feed = t.newFeed()
		t.feed.enable(feed.Retention)
		t.saveFeed(b)
	}
	if err := e.commit(b); err != nil {
		return storeError(err, "table %q: create", m.Name)
	}
	e.tables[m.Name] = t
	return nil
}

// DescribeTable implements tablekit.Backend.
func (e *Engine) DescribeTable(ctx context.Context, name string) (*tablekit.TableMeta, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	defer e.end()
	t, err := e.table(name)
	if err != nil {
		return nil, err
	}
	t.mu.RLock()
	m, deleted := t.meta, t.deleted
	t.mu.RUnlock()
	if deleted {
		return nil, tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	m.Key = slices.Clone(m.Key)
	return &m, nil
}

// ListTables implements tablekit.Backend.
func (e *Engine) ListTables(ctx context.Context) ([]string, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	defer e.end()
	e.mu.Lock()
	names := make([]string, 0, len(e.tables))
	for n := range e.tables {
		names = append(names, n)
	}
	e.mu.Unlock()
	slices.Sort(names)
	return names, nil
}

// UpdateTable implements tablekit.Backend: it stores the new options and
// Generation+1 if the table still has req.Meta's Incarnation and
// Generation.
func (e *Engine) UpdateTable(ctx context.Context, req *tablekit.UpdateTableRequest) (*tablekit.TableMeta, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	defer e.end()
	t, err := e.table(req.Meta.Name)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.deleted {
		return nil, tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", req.Meta.Name)
	}
	if err := driver.CheckUpdateTable(&t.meta, req); err != nil {
		return nil, err
	}
	m := t.meta
	m.Options = req.Options
	m.Generation++
	val, err := encodeMeta(&m, t.rows)
	if err != nil {
		return nil, tablekit.WrapError(tablekit.ErrInvalidArgument, err, "table %q: metadata", m.Name)
	}
	b := e.db.NewBatch()
	defer b.Close()
	_ = b.Set(metaKey(m.Name), val, nil)
	if err := e.commit(b); err != nil {
		return nil, storeError(err, "table %q: update", m.Name)
	}
	t.meta = m
	m.Key = slices.Clone(m.Key)
	return &m, nil
}

// DeleteTable implements tablekit.Backend: the metadata and every row go
// in one atomic batch.
func (e *Engine) DeleteTable(ctx context.Context, name string) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	defer e.end()
	t, err := e.table(name)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.deleted {
		return tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	b := e.db.NewBatch()
	defer b.Close()
	_ = b.DeleteRange(t.prefix, t.top, nil)
	_ = b.Delete(metaKey(name), nil)
	_ = b.DeleteRange(feedPrefix(t.rows), codec.PrefixSuccessor(feedPrefix(t.rows)), nil)
	_ = b.Delete(feedStateKey(t.rows), nil)
	_ = b.DeleteRange(aiTablePrefix(t.rows), codec.PrefixSuccessor(aiTablePrefix(t.rows)), nil)
	if err := e.commit(b); err != nil {
		return storeError(err, "table %q: delete", name)
	}
	t.deleted = true
	e.mu.Lock()
	delete(e.tables, name)
	e.mu.Unlock()
	return nil
}

// rowPool holds scratch rows for decoding stored rows that are only
// evaluated.
var rowPool = sync.Pool{New: func() any { return new(rowmodel.Row) }}

func putRow(r *rowmodel.Row) {
	clear(r.Cells)
	r.Cells = r.Cells[:0]
	rowPool.Put(r)
}

// GetRow implements tablekit.Backend.
func (e *Engine) GetRow(ctx context.Context, req *tablekit.GetRowRequest) (*tablekit.Row, error) {
	t, err := e.using(ctx, req.Meta)
	if err != nil {
		return nil, err
	}
	defer e.end()
	var buf [256]byte
	opts := t.meta.Options
	k := codec.AppendKey(append(buf[:0], t.prefix...), req.Key)
	val, closer, err := e.db.Get(k)
	t.mu.RUnlock()
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, storeError(err, "table %q: read %v", req.Meta.Name, req.Key)
	}
	r := rowPool.Get().(*rowmodel.Row)
	defer putRow(r)
	err = decodeRow(r, view(val))
	if err != nil {
		_ = closer.Close()
		return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "table %q: row %v", req.Meta.Name, req.Key)
	}
	cols, found := rowmodel.Read(r, opts, &req.Read, req.Now)
	if !found {
		_ = closer.Close()
		return nil, nil
	}
	// The cells view pebble's buffer: give them strings of their own,
	// in one allocation.
	own(cols)
	_ = closer.Close()
	return &tablekit.Row{Key: slices.Clone(req.Key), Columns: cols}, nil
}

// stripe returns the write mutex of the row at encoded key k.
func (e *Engine) stripe(k []byte) int {
	return int(maphash.Bytes(e.seed, k) % stripes)
}

// lockStripes locks the row locks held in ascending order (see
// enginekit.LockStripes) and returns their unlock.
func (e *Engine) lockStripes(held []int) (unlock func()) {
	return enginekit.LockStripes(e.locks[:], held)
}

// Write implements tablekit.Backend: under the table's shared lock and the
// row's stripe, it reads the stored row (when the write needs it), applies
// the write with rowmodel under the table's stored options, and commits
// the new row (or its deletion) as one pebble batch.
func (e *Engine) Write(ctx context.Context, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	if w.Kind != tablekit.WriteDelete && w.Key.AutoIncrementIndex() >= 0 {
		return e.writeAuto(ctx, w) // autoinc.go
	}
	t, err := e.using(ctx, w.Meta)
	if err != nil {
		return nil, err
	}
	defer e.end()
	defer t.mu.RUnlock()
	res, _, err := e.writeRow(t, w, false)
	return res, err
}

// writeRow applies w under its row's stripe (the caller holds t.mu shared)
// and commits it, releasing the stripe once the write is visible, before
// the sync (see commitThen). With absent, a row already stored there is
// not written: taken reports it.
func (e *Engine) writeRow(t *table, w *tablekit.WriteRequest, absent bool) (_ *tablekit.UpdateResult, taken bool, _ error) {
	b := e.db.NewBatch()
	defer b.Close()
	k := t.rowKey(w.Key)
	mu := &e.locks[e.stripe(k)]
	mu.Lock()
	if absent {
		switch _, closer, err := e.db.Get(k); {
		case err == nil:
			closer.Close()
			mu.Unlock()
			return nil, true, nil
		case !errors.Is(err, pebble.ErrNotFound):
			mu.Unlock()
			return nil, false, storeError(err, "%v", w)
		}
	}
	var tickets feedTickets
	defer tickets.done()
	res, err := e.apply(b, t, w, k, &tickets)
	if err != nil || b.Empty() {
		mu.Unlock()
		return res, false, err
	}
	if err := e.commitThen(b, mu.Unlock); err != nil {
		return nil, false, storeError(err, "%v", w)
	}
	return res, false, nil
}

// encPool holds buffers for encoding rows.
var encPool = sync.Pool{New: func() any { return new([]byte) }}

// apply runs w against its stored row (the caller holds t.mu shared and
// the row's stripe) and adds what it writes to b.
func (e *Engine) apply(b *pebble.Batch, t *table, w *tablekit.WriteRequest, k []byte, tickets *feedTickets) (*tablekit.UpdateResult, error) {
	// The engine's own options are authoritative; the request's may be a
	// cached copy.
	if w.Meta.Options != t.meta.Options || w.Meta.Generation != t.meta.Generation {
		c := *w
		c.Meta = &t.meta
		w = &c
	}
	var cur *rowmodel.Row
	if w.Kind == tablekit.WriteUpdate || !w.Condition.IsZero() {
		val, closer, err := e.db.Get(k)
		switch {
		case err == nil:
			defer closer.Close()
			r := rowPool.Get().(*rowmodel.Row)
			defer putRow(r)
			if err := decodeRow(r, view(val)); err != nil {
				return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "table %q: row %v", w.Meta.Name, w.Key)
			}
			cur = r
		case errors.Is(err, pebble.ErrNotFound):
		default:
			return nil, storeError(err, "%v", w)
		}
	}
	var nr rowmodel.Row
	keep, res, err := rowmodel.ApplyTo(&nr, cur, w)
	if err != nil {
		return nil, err
	}
	if keep && t.ai != nil {
		if err := e.noteAutoInc(b, t, w); err != nil { // autoinc.go
			return nil, err
		}
	}
	t.record(b, w, res, tickets)
	if !keep {
		if cur != nil || w.Kind == tablekit.WriteDelete {
			_ = b.Delete(k, nil)
		}
		return res, nil
	}
	bp := encPool.Get().(*[]byte)
	buf := appendRow((*bp)[:0], &nr)
	_ = b.Set(k, buf, nil) // Set copies
	if cap(buf) <= 1<<20 {
		*bp = buf
		encPool.Put(bp)
	}
	return res, nil
}

// BatchWriteRow implements tablekit.BatchWriter: every write's row is
// read and applied under its table's shared lock and its stripe, and all
// the rows that change are committed in one pebble batch with one sync.
// A write whose condition or increment fails has its own error and
// writes nothing; the others are still applied.
func (e *Engine) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	defer e.end()
	out := make([]tablekit.WriteResponse, len(reqs))
	// Tables are locked in name order, then stripes in index order, so
	// that concurrent batches and DeleteTable cannot deadlock.
	tabs := map[string]*table{}
	for i, w := range reqs {
		if _, ok := tabs[w.Meta.Name]; ok {
			continue
		}
		t, err := e.table(w.Meta.Name)
		if err != nil {
			out[i].Err = err
			continue
		}
		tabs[w.Meta.Name] = t
	}
	defer rlockInOrder(tabs)()
	keys := make([][]byte, len(reqs))
	var held []int
	reqs, assigned, err := e.assignAll(reqs, func(i int) *table { // autoinc.go
		if t := tabs[reqs[i].Meta.Name]; t != nil && t.current(reqs[i].Meta) == nil {
			return t
		}
		return nil
	})
	if err != nil {
		var ae *tablekit.AtomicWriteError
		if !errors.As(err, &ae) {
			return nil, err
		}
		return nil, ae.Err // a store error: the whole batch fails
	}
	for i, w := range reqs {
		t := tabs[w.Meta.Name]
		if t == nil {
			if out[i].Err == nil {
				out[i].Err = tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", w.Meta.Name)
			}
			continue
		}
		if err := t.current(w.Meta); err != nil {
			out[i].Err = err
			continue
		}
		keys[i] = t.rowKey(w.Key)
		held = append(held, e.stripe(keys[i]))
	}
	unlock := e.lockStripes(held)
	defer unlock()
	b := e.db.NewBatch()
	defer b.Close()
	var tickets feedTickets
	defer tickets.done()
	var applied []int
	for i, w := range reqs {
		if keys[i] == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, err := e.apply(b, tabs[w.Meta.Name], w, keys[i], &tickets)
		if err == nil && assigned != nil && assigned[i] {
			res = withKey(res, w.Key)
		}
		out[i] = tablekit.WriteResponse{Update: res, Err: err}
		if err == nil {
			applied = append(applied, i)
		}
	}
	if !b.Empty() {
		if err := e.commitThen(b, unlock); err != nil {
			err = storeError(err, "batch of %d writes", len(reqs))
			for _, i := range applied {
				out[i] = tablekit.WriteResponse{Err: err}
			}
		}
	}
	return out, nil
}

// Checkpoint writes an online, consistent snapshot of the store into dir
// (which must not exist yet): a directory Open can open, for backups.
// Writes may continue while it runs; the snapshot holds every write
// acknowledged before the call.
func (e *Engine) Checkpoint(ctx context.Context, dir string) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	defer e.end()
	if err := e.db.Checkpoint(dir, pebble.WithFlushedWAL()); err != nil {
		return storeError(err, "fileengine: checkpoint of %q into %q", e.dir, dir)
	}
	return nil
}

// storeError turns an error of pebble or the file system into a
// tablekit.Error (see classify).
func storeError(err error, format string, args ...any) error {
	if pebble.IsCorruptionError(err) && !errors.Is(err, ErrCorrupt) {
		err = fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return driver.Wrap(context.Background(), err, classify, format, args...)
}

// fsError is storeError for errors of the os package.
func fsError(err error, format string, args ...any) error {
	return tablekit.WrapError(classify(err), err, format, args...)
}

// classify maps pebble's and the file system's errors to SPEC §12's
// sentinels: corruption and a full disk are ErrUnavailable (the store
// cannot serve, though an operator may fix it), a refused permission or a
// read-only file system ErrPermissionDenied, a path that is not a
// directory ErrInvalidArgument.
func classify(err error) error {
	switch {
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EROFS), errors.Is(err, fs.ErrPermission):
		return tablekit.ErrPermissionDenied
	case errors.Is(err, syscall.ENOTDIR):
		return tablekit.ErrInvalidArgument
	}
	return tablekit.ErrUnavailable
}

// logger passes pebble's error messages to Options.Logf and drops the
// rest; a fatal message panics, as pebble expects it not to return.
type logger struct{ logf func(string, ...any) }

func (l logger) Infof(string, ...any) {}

func (l logger) Errorf(format string, args ...any) {
	if l.logf != nil {
		l.logf(format, args...)
	}
}

func (l logger) Fatalf(format string, args ...any) {
	if l.logf != nil {
		l.logf(format, args...)
	}
	msg := fmt.Sprintf(format, args...)
	if !strings.HasPrefix(msg, "pebble: ") {
		msg = "pebble: " + msg
	}
	f := &fatal{msg: msg}
	for _, a := range args {
		if err, ok := a.(error); ok && f.cause == nil {
			f.cause = err
		}
	}
	panic(f)
}

// fatal is what the logger panics with: pebble's fatal error, and the
// error it reported, if any.
type fatal struct {
	msg   string
	cause error
}

func (f *fatal) Error() string { return f.msg }
func (f *fatal) Unwrap() error { return f.cause }

// commit commits b with the engine's write options. pebble treats a
// commit whose write-ahead-log write or sync fails (a full disk, an I/O
// error, a file system remounted read-only) as fatal: it cannot tell what
// reached the log, its commit pipeline is left stuck (later commits would
// wait forever behind the failed one), and it calls its logger's Fatalf,
// which panics. commit recovers that panic on the committing goroutine
// and returns it as an error classified by its cause (ErrUnavailable for
// a full disk, ErrPermissionDenied for a read-only file system), and
// from then on the engine refuses every write with that error, without
// calling pebble, until it is closed and opened again: Open replays the
// log up to the last complete record, which holds every acknowledged
// write. Reads go on working. Any other panic is not recovered.
func (e *Engine) commit(b *pebble.Batch) error { return e.commitThen(b, func() {}) }

// commitThen is commit calling visible once b's writes are visible to
// reads and to later commits (or the commit failed), before the wait for
// the WAL's sync, as pebble's DB.ApplyNoSyncWait and Batch.SyncWait allow:
// a writer releases its row locks there, so that a writer of the same row
// (and of another row of the same stripe) proceeds, and the two commits
// share one sync instead of waiting for two in turn. This weakens nothing:
// pebble makes a synced batch visible before its sync either way, and a
// later commit is acknowledged only after its own sync, which covers the
// log up to it, the earlier batch included. visible is called exactly once.
func (e *Engine) commitThen(b *pebble.Batch, visible func()) (err error) {
	released := false
	release := func() {
		if !released {
			released = true
			visible()
		}
	}
	defer release()
	if f := e.failed.Load(); f != nil {
		return *f
	}
	fail := func(cause error) error {
		var err error = tablekit.WrapError(classify(cause), cause, "fileengine: %q: the write-ahead log failed; the engine refuses writes until it is opened again", e.dir)
		e.failed.CompareAndSwap(nil, &err)
		return err
	}
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		f, ok := p.(*fatal)
		if !ok {
			panic(p)
		}
		err = fail(f)
	}()
	if !e.wo.Sync {
		return b.Commit(e.wo)
	}
	if err := e.db.ApplyNoSyncWait(b, e.wo); err != nil {
		return err
	}
	release()
	if err := b.SyncWait(); err != nil {
		// What pebble's Fatalf reports when it waits for the sync itself.
		return fail(&fatal{msg: fmt.Sprintf("pebble: fatal commit error: %v", err), cause: err})
	}
	return nil
}

// rlockInOrder read-locks the tables of tabs (nil ones left out) in the
// order of their names, the one order in which every call holding several
// tables takes them, so that two such calls never wait on each other, and
// returns the function that unlocks them.
func rlockInOrder(tabs map[string]*table) (unlock func()) {
	names := make([]string, 0, len(tabs))
	for n, t := range tabs {
		if t != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		tabs[n].mu.RLock()
	}
	return func() {
		for _, n := range names {
			tabs[n].mu.RUnlock()
		}
	}
}

// rowKey returns the pebble key of k's row in t, in a buffer of its own:
// the table's prefix, then the key's order-preserving encoding.
func (t *table) rowKey(k tablekit.PrimaryKey) []byte {
	return codec.AppendKey(append(make([]byte, 0, len(t.prefix)+codec.KeySize(k)), t.prefix...), k)
}
