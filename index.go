package tablekit

// Secondary indexes (SPEC §16), kept by the Client on every backend.
//
// # Storage layout
//
// Nothing of an index lives in its table: no read, range, export, copy or
// change feed of the table sees it. The Client keeps, through the same
// Backend calls any table uses:
//
//   - the catalog, table "_tkix", one row per indexed table (key "t", the
//     table's name): column "d" (String) is the JSON of the table's
//     [IndexSpec] list, "i" (String) the table's Incarnation, "g" (Integer)
//     a counter that conditional updates compare;
//   - one entry table per index, "_tkix_" and 16 hex digits (the spec's
//     Storage), key k0..k3 (Binary): an entry's key is its index key (the
//     index columns' values, then the table's other key columns) encoded in
//     one order-preserving byte string (String and Binary escaped and
//     terminated, Integer 8 bytes big endian with the sign bit flipped) cut
//     into 1,024-byte pieces, so the bytes, and the entries, sort in index-key
//     order; its cells "t" and "n" (Integer) are its stamp: the writer's
//     clock in ms and a random number.
//
// Names starting with "_tkix" are reserved: ListTables hides them. They
// are not refused, because a Client may serve another one's tables (the
// Tablestore emulator keeps its tables through a Client): a program must
// not name its tables so.
//
// # What is kept, and why reads are right
//
// The invariant: for every row and index, an entry exists for every
// combination of the visible values (SPEC §5, §6) of the index columns,
// one value per column. With MaxVersions 1 that is the row's one current
// index key; with more, every key that deleting newer versions may reveal.
// Expiry (TTL) never reveals an older value (versions expire oldest
// first), it only removes, and removing never needs an entry. So a row
// whose current values match an index key always has that entry. Raising
// a table's TTL or MaxVersions may bring back hidden values whose entries
// a reindex removed: [Client.UpdateTable] then puts their entries (a
// backfill, index_options.go) before it returns.
//
// Writes keep it with ordered steps: first the entries of every value
// combination the write may make visible, then the row. A put knows them
// from its cells; an update writing cells of an index with two or more
// attribute columns, or incrementing one, reads the row first (the
// visible versions of the index columns) and writes the row on the
// condition (ANDed with the caller's) that each index column's newest
// value is still what it read: a concurrent writer of another index column
// then fails the condition and the write starts again (at most maxIndexAttempts, 32, times).
// The guard compares newest values only, so it has a blind spot (found by
// TestIndexGuardABA): a writer of b reads a = p (and b = q) and puts the
// entries (p, r); before its row write, a is put to x (whose writer read
// b = q and put (x, q)), then to p again. The guard passes, x stays
// visible under the newer p, and (x, r) is in no writer's plan; deleting
// the newest version of a would then show the row at (x, r) without an
// entry. So a guarded write of an index with two or more attribute
// columns, in a table keeping several versions (with one, the visible
// values are the newest, which the guard checks), after its row write,
// reads the guarded columns again and puts the entry of every combination
// its plan did not cover (the values read, with the ones written). Why
// that leaves none missing: take a combination of values visible now, and
// the last of the row writes that made its values visible, W. A value
// stays visible from its write until it goes for good (deleted or past
// MaxVersions: neither comes back), so every value of the combination is
// visible when W reads again after its row write: W put its entry before
// its row write (its plan covered it) or puts it then. Other writers need no second read: a
// put replaces the row (it plans every combination of its cells), and an
// index of one attribute column combines the one value a write puts with
// the key columns. What remains: between W's row write and its second
// put, the combination exists without an entry; a read misses the row
// only if a delete of the newer versions makes it the newest within that
// moment, and a crash there leaves it missing until [Client.Reindex]
// (whose verify reports it). An error of the second put says the row was
// written (ErrUnavailable).
//
// A backend with [Capabilities.IndexedWrite] ([IndexWriter]: the local
// and file engines) takes the row write and its entries in one call
// (WriteIndexed), and keeps the order itself: entries never later than
// the row, for readers and across a crash (the file engine commits both
// in one pebble batch, with one sync; the local engine stores the entries,
// then the row). The plan, the guard, the retries and the second read of
// a guarded write are the same on every backend; what one call saves is
// the separate entry puts (a second Backend call, and on the file engine a
// second sync) and the grace check (an entry cannot grow old before its
// row write when both are one step). Without the capability, or when
// WriteIndexed answers ErrSkip, the Client makes the calls in order.
//
// Reads verify on every backend, IndexedWrite or not: entries are never
// removed on the write path (see below), so an entry whose row moved on
// stays until a read or Reindex removes it (below), and the read of each entry's row, which hides it,
// is also what returns the row's included columns: the check itself is
// a comparison of values already read. The cost of an index read is that
// of its page of entries plus one row read per entry; a backend with
// [Capabilities.LendingScan] lends the page of entries (the read copies
// their keys' bytes, no page is built), and one with
// [Capabilities.BatchRead] reads the page's rows in one call (the local
// engine under one lock, the file engine through one pebble iterator), the
// others row by row.
//
// Deletes (row, column, version) write no entry: they only shrink the
// visible values. Entries are never removed on the write path: removing an
// entry while another writer has put it and not yet written its row would
// lose it (the race of the old-entry delete). So a crash or failed write
// leaves extra entries, never missing ones, and so does every write that
// moves a row out of an index value, until a read or Reindex removes them.
//
// Reads take the entries of the range in index-key order, read their rows
// in batches (BatchGetRow) and return a row only if its newest visible
// values equal the entry's index key at that read, so an extra entry is
// never seen and each row returned matched at one instant during the read.
//
// Removal is [Client.Reindex]'s, and the reads': an entry goes only when
// its stamp is older than the grace period ([WithIndexGrace], 1 minute),
// no combination of the row's visible values is its key, and its stamp is
// unchanged (a conditional delete): a writer that put the entry again in
// the meantime wins. A writer whose row write would start more than half
// the grace after its entry put puts the entries again first, so an entry
// whose row write is pending is never old enough to go (clocks of clients
// must agree within half the grace).
//
// Reindex judges every entry; a read (index_read.go,
// entrySweeper) removes the old entries its own verification found stale,
// where that verification can tell: in a table keeping one version (one
// visible value per column, the newest, which the read compares), on a
// read without a filter (a filtered-out row reads as no row). So an index
// of a value rows pass through (a job's "pending") does not grow with
// every row that ever had it: without the sweep, 1,000 jobs gone from
// pending to done made each read of the 10 pending ones verify 1,010
// entries (BenchmarkIndexStale, quiet machine: 1.4-1.5 ms a read on the
// local engine, 26-29 µs once swept, 16-20 µs for an index that never had
// a stale entry). In tables keeping several versions, extra entries stay
// until Reindex. A Client made [WithIndexSweep](false) never sweeps (one
// that must not write).
//
// Adding an index ([Client.AddIndex]) is an online schema change: the
// index is stored as write-only, so every client that loads the table's
// metadata maintains it; the call waits the metadata cache lifetime of
// its client ([WithMetaCacheTTL]) plus a second, so that every client
// (whose cache lifetime is at most that) has loaded it, then backfills
// from the rows and reports it ready. Reads of an index not ready fail
// with ErrUnavailable.
//
// # Auto-increment keys
//
// An entry's key holds the row's whole key, and the entry must be stored
// no later than the row (the order that makes a crash leave an extra
// entry, never a missing one), but the value of an auto-increment key
// column (SPEC §14) exists only once the row write has assigned it. Done
// in separate Backend calls, each way round breaks SPEC §16: entries after
// the row leave, on a crash, a row no index read returns (and, before the
// entry put, one a read that starts after the row is visible misses); an
// entry before the row has no key to carry, and a placeholder left in the
// store (the row's other key columns and index values, the value open)
// needs every read to resolve it with a range read of the partition, out
// of index order; creating the row empty first to learn its key shows a
// row without its cells, and a crash leaves it.
//
// So such a table is indexed only where one step assigns the value and
// stores the entries under it: a backend with [Capabilities.IndexedWrite]
// ([IndexWriter], whose contract includes it: no separate capability).
// For a put or update whose key holds [AutoIncrement] the Client plans
// the entries as for any new row (no row to read, no guard), each entry
// key holding a placeholder, 8 bytes wide, where the auto-increment column
// falls in the index key (among the index columns or in the table's key
// columns after them); WriteIndexed assigns the value as Write would,
// replaces the placeholder ([AssignEntries], the one implementation the
// engines share) and stores the entries with the row: the file engine in
// the row's pebble batch, with the counter key, the local engine before
// the row. Its result carries the assigned key, as Write's does, for
// ReturnKey. Updates and deletes of stored rows (real keys) go as on any
// table, and so do backfill ([Client.AddIndex]) and [Client.Reindex],
// which read the rows' stored keys.
//
// Elsewhere the index is refused: CreateTable with indexes and AddIndex
// on a backend without IndexedWrite fail with ErrUnimplemented naming the
// table and the column, before anything is stored (Bigtable and DynamoDB
// draw the value from a counter inside their Write, Tablestore's service
// assigns it inside its PutRow: none takes entries with it). A write with
// AutoIncrement that meets an indexed table anyway (a Client whose backend
// lacks IndexedWrite serving a table another indexed, or a WriteIndexed
// answering ErrSkip, as a wrapper whose inside lacks it does) fails with
// ErrUnimplemented and writes nothing: never the row without its entries.
// An atomic write (SPEC §13) creating a row with AutoIncrement in an
// indexed table is refused the same way, before any write (no backend call
// takes an atomic write with its entries); its writes of stored rows go as
// on any table.
//
// Known limit: with MaxVersions above 1 and two or more attribute index
// columns, the newest-value condition does not see a concurrent write of
// an older version (an explicit version) of another index column either;
// the second read of the later writer puts the combination those two
// writes make, so it lacks its entry only in the moment described above.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// Index limits (SPEC §16).
const (
	MaxIndexes         = 5
	MaxIndexColumns    = 4
	MaxIncludedColumns = 32
	// MaxIndexKeySize bounds an encoded index key (its entry's key).
	MaxIndexKeySize = 4 * MaxKeyValueSize
)

// IndexState is an index's state in its online creation.
type IndexState string

// The index states: written by every writer, then filled, then readable.
const (
	IndexWriteOnly IndexState = "write-only"
	IndexReady     IndexState = "ready"
)

// IndexSpec is a secondary index of a table (SPEC §16).
type IndexSpec struct {
	Name string
	// Columns are the index columns: key columns of the table (Type may be
	// left zero) or attribute columns with a key type.
	Columns []KeyColumn
	// Include are attribute columns an index read returns.
	Include []string `json:",omitempty"`
	// State and Storage are set by the Client.
	State   IndexState `json:",omitempty"`
	Storage string     `json:",omitempty"`
}

// reservedPrefix starts every name the Client keeps for indexes.
const reservedPrefix = "_tkix"

// catalogTable holds the index specs of every indexed table.
const catalogTable = reservedPrefix

// IsReservedName reports whether name is one the Client keeps for its
// indexes' storage (hidden from ListTables; programs must not use them).
func IsReservedName(name string) bool { return strings.HasPrefix(name, reservedPrefix) }

// newCatalogMeta is the meta the catalog is created with.
func newCatalogMeta() *TableMeta {
	return &TableMeta{Name: catalogTable, Key: KeySchema{{Name: "t", Type: TypeString}},
		Options: resolveCreateOptions(TableOptions{}), Incarnation: newIncarnation(), Generation: 1}
}

// catalogMeta returns the catalog's meta as stored (read once, then
// cached), or nil when there is no catalog.
func (c *Client) catalogMeta(ctx context.Context) (*TableMeta, error) {
	if m := c.catalog.Load(); m != nil {
		return m, nil
	}
	m, err := c.b.DescribeTable(ctx, catalogTable)
	if errors.Is(err, ErrTableNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c.catalog.Store(m)
	return m, nil
}

// catalogCall calls call with the catalog's meta (nil: none), once more
// with it read again if the answer says the cached one was stale.
func (c *Client) catalogCall(ctx context.Context, call func(m *TableMeta) error) error {
	m, err := c.catalogMeta(ctx)
	if err != nil {
		return err
	}
	if err = call(m); err != nil && m != nil && isStale(err) {
		c.catalog.Store(nil)
		if m, err = c.catalogMeta(ctx); err != nil {
			return err
		}
		err = call(m)
	}
	return err
}

// entryKey is the key schema of an entry table.
var entryKey = KeySchema{{Name: "k0", Type: TypeBinary}, {Name: "k1", Type: TypeBinary}, {Name: "k2", Type: TypeBinary}, {Name: "k3", Type: TypeBinary}}

// storageMeta is the meta of an index's entry table (its incarnation is
// its name: it never changes), made once per name.
func storageMeta(storage string) *TableMeta {
	if m, ok := storageMetas.Load(storage); ok {
		return m.(*TableMeta)
	}
	m := &TableMeta{Name: storage, Key: entryKey, Options: resolveCreateOptions(TableOptions{}), Incarnation: storage[len(reservedPrefix)+1:], Generation: 1}
	storageMetas.Store(storage, m)
	return m
}

// storageMetas caches storageMeta's answers (a few per index ever made by
// the process; the backend only reads a request's meta).
var storageMetas sync.Map

// WithIndexGrace sets how old an entry must be before [Client.Reindex] may
// remove it (default 1 minute); see the package's index notes.
func WithIndexGrace(d time.Duration) ClientOption { return func(cl *Client) { cl.indexGrace = d } }

// WithIndexSweep sets whether the Client's index reads remove the stale
// entries they meet (on by default; see the package's index notes). Turn
// it off for a Client that must not write, such as one whose credentials
// only read: its reads then leave stale entries to [Client.Reindex].
func WithIndexSweep(on bool) ClientOption { return func(cl *Client) { cl.noSweep = !on } }

const defaultIndexGrace = time.Minute

func (c *Client) grace() time.Duration {
	if c.indexGrace > 0 {
		return c.indexGrace
	}
	return defaultIndexGrace
}

// checkIndexes validates m's index specs against its schema and fills each
// key column's type.
func checkIndexes(m *TableMeta) *Error {
	if len(m.Indexes) > MaxIndexes {
		return invalid("table %q has %d indexes; the limit is %d", m.Name, len(m.Indexes), MaxIndexes)
	}
	specs := make([]IndexSpec, len(m.Indexes))
	for i, ix := range m.Indexes {
		if err := checkName("index", ix.Name); err != nil {
			return err
		}
		for _, prev := range specs[:i] {
			if prev.Name == ix.Name {
				return invalid("table %q: index %q appears twice", m.Name, ix.Name)
			}
		}
		ix.Columns = slices.Clone(ix.Columns)
		ix.Include = slices.Clone(ix.Include)
		if len(ix.Columns) < 1 || len(ix.Columns) > MaxIndexColumns {
			return invalid("table %q index %q has %d columns; it must have 1-%d", m.Name, ix.Name, len(ix.Columns), MaxIndexColumns)
		}
		if len(ix.Include) > MaxIncludedColumns {
			return invalid("table %q index %q includes %d columns; the limit is %d", m.Name, ix.Name, len(ix.Include), MaxIncludedColumns)
		}
		for j := range ix.Columns {
			col := &ix.Columns[j]
			if err := checkName("column", col.Name); err != nil {
				return err
			}
			for _, prev := range ix.Columns[:j] {
				if prev.Name == col.Name {
					return invalid("table %q index %q: column %q appears twice", m.Name, ix.Name, col.Name)
				}
			}
			if col.AutoIncrement {
				return invalid("table %q index %q: column %q cannot be auto-increment", m.Name, ix.Name, col.Name)
			}
			for _, kc := range m.Key {
				if kc.Name == col.Name {
					if col.Type == 0 {
						col.Type = kc.Type
					}
					if col.Type != kc.Type {
						return invalid("table %q index %q: key column %q has type %v, the index says %v", m.Name, ix.Name, col.Name, kc.Type, col.Type)
					}
				}
			}
			if !col.Type.IsKeyType() {
				return invalid("table %q index %q: column %q has type %v; an index column must be String, Integer or Binary", m.Name, ix.Name, col.Name, col.Type)
			}
		}
		for j, name := range ix.Include {
			if err := checkAttrName(m, name); err != nil {
				return invalid("table %q index %q: included %s", m.Name, ix.Name, err.Msg)
			}
			if slices.Contains(ix.Include[:j], name) {
				return invalid("table %q index %q: included column %q appears twice", m.Name, ix.Name, name)
			}
		}
		specs[i] = ix
	}
	m.Indexes = specs
	return nil
}

// checkAutoIndexed refuses indexes on m, a table with an auto-increment
// key column, on a backend without [Capabilities.IndexedWrite] (see the
// index notes, "Auto-increment keys").
func (c *Client) checkAutoIndexed(m *TableMeta) *Error {
	if len(m.Indexes) == 0 || c.caps.IndexedWrite {
		return nil
	}
	if i := slices.IndexFunc(m.Key, func(kc KeyColumn) bool { return kc.AutoIncrement }); i >= 0 {
		return autoIncrementRefusal(m.Name, m.Key[i].Name, "the backend cannot commit a row write and its index entries in one step (Capabilities.IndexedWrite is false)")
	}
	return nil
}

// autoIncrementRefusal is the refusal of an index on a table with an
// auto-increment key column, or of a write creating a row of one, where
// the backend cannot commit the row and its entries in one step: why says
// what is missing.
func autoIncrementRefusal(table, column, why string) *Error {
	return &Error{Table: table, Code: ErrUnimplemented, Msg: fmt.Sprintf("key column %q is auto-increment and %s: "+
		"an index entry holds the row's full key and must be stored no later than the row, so that a crash leaves an extra entry and never a missing one, "+
		"but the value of %q is assigned by the row write itself; only a backend that assigns it and stores the entries in the row write's step keeps such an index (SPEC §14, §16)", column, why, column)}
}

// newStorageName returns a new entry table's name.
func newStorageName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return reservedPrefix + "_" + hex.EncodeToString(b[:])
}

// catalogRow is the catalog's row of a table.
type catalogRow struct {
	specs       []IndexSpec
	incarnation string
	gen         int64
	found       bool
}

// readCatalog reads table's catalog row; a missing catalog is no row.
func (c *Client) readCatalog(ctx context.Context, table string) (catalogRow, error) {
	var r *Row
	err := c.catalogCall(ctx, func(m *TableMeta) (err error) {
		if m == nil {
			return nil
		}
		r, err = c.b.GetRow(ctx, &GetRowRequest{Meta: m, Key: Key("t", String(table)), Read: ReadSpec{MaxVersions: 1}, Now: c.now()})
		return err
	})
	if err != nil {
		if errors.Is(err, ErrTableNotFound) {
			return catalogRow{}, nil
		}
		return catalogRow{}, err
	}
	if r == nil {
		return catalogRow{}, nil
	}
	var cr catalogRow
	cr.found = true
	if v, ok := r.Get("d"); ok {
		s, _ := v.Str()
		if err := json.Unmarshal([]byte(s), &cr.specs); err != nil {
			return catalogRow{}, Errorf(ErrUnavailable, "table %q: the index catalog's row does not decode: %v", table, err)
		}
	}
	if v, ok := r.Get("i"); ok {
		cr.incarnation, _ = v.Str()
	}
	if v, ok := r.Get("g"); ok {
		cr.gen, _ = v.Int()
	}
	return cr, nil
}

// writeCatalog replaces table's catalog row if its counter is still prev
// (prev.found false: if there is none), creating the catalog when needed.
func (c *Client) writeCatalog(ctx context.Context, table, incarnation string, specs []IndexSpec, prev catalogRow) error {
	d, _ := json.Marshal(specs)
	cond := Condition{Row: ExpectNotExist}
	if prev.found {
		cond = Condition{Row: ExpectExist, Column: SingleColumnValue("g", Equal, Integer(prev.gen)).Required()}
	}
	now := c.now()
	req := &WriteRequest{Kind: WritePut, Key: Key("t", String(table)), Condition: cond, Now: now,
		Columns: []Column{{Name: "d", Value: String(string(d)), Version: now}, {Name: "g", Value: Integer(prev.gen + 1), Version: now}, {Name: "i", Value: String(incarnation), Version: now}}}
	return c.catalogCall(ctx, func(m *TableMeta) error {
		if m == nil {
			if err := c.b.CreateTable(ctx, newCatalogMeta()); err != nil && !errors.Is(err, ErrAlreadyExists) {
				return err
			}
			var err error
			if m, err = c.catalogMeta(ctx); err != nil || m == nil {
				return Errorf(ErrUnavailable, "the index catalog %q was created but cannot be read: %v", catalogTable, err)
			}
		}
		req.Meta = m
		_, err := c.b.Write(ctx, req)
		return err
	})
}

// deleteCatalog removes table's catalog row.
func (c *Client) deleteCatalog(ctx context.Context, table string) error {
	return c.catalogCall(ctx, func(m *TableMeta) error {
		if m == nil {
			return nil
		}
		_, err := c.b.Write(ctx, &WriteRequest{Meta: m, Kind: WriteDelete, Key: Key("t", String(table)), Now: c.now()})
		return err
	})
}

// describe is the backend's DescribeTable with the table's indexes.
func (c *Client) describe(ctx context.Context, table string) (*TableMeta, error) {
	m, err := c.b.DescribeTable(ctx, table)
	if err != nil {
		return nil, err
	}
	cr, err := c.readCatalog(ctx, table)
	if err != nil {
		return nil, err
	}
	cp := *m
	cp.Indexes = nil
	if cr.found && (cr.incarnation == m.Incarnation || m.Incarnation == "") {
		cp.Indexes = cr.specs
	}
	return &cp, nil
}

// createIndexStorage creates the entry tables of specs (setting Storage).
func (c *Client) createIndexStorage(ctx context.Context, specs []IndexSpec) error {
	for i := range specs {
		specs[i].Storage = newStorageName()
		if err := c.b.CreateTable(ctx, storageMeta(specs[i].Storage)); err != nil {
			return err
		}
	}
	return nil
}

// dropIndexStorage deletes the entry tables of specs, ignoring missing ones.
func (c *Client) dropIndexStorage(ctx context.Context, specs []IndexSpec) error {
	for _, ix := range specs {
		if ix.Storage == "" {
			continue
		}
		if err := c.b.DeleteTable(ctx, ix.Storage); err != nil && !errors.Is(err, ErrTableNotFound) {
			return err
		}
	}
	return nil
}

// createIndexed is CreateTable's part for a table created with indexes:
// the catalog row and entry tables first, so that no client can see the
// table without its indexes, then the table.
func (c *Client) createIndexed(ctx context.Context, m *TableMeta, create func(context.Context, *TableMeta) error) error {
	cr, err := c.readCatalog(ctx, m.Name)
	if err != nil {
		return err
	}
	if cr.found {
		if _, err := c.b.DescribeTable(ctx, m.Name); err == nil {
			return Errorf(ErrAlreadyExists, "table %q exists", m.Name)
		}
		// A leftover of a table deleted without the Client: replace it.
		_ = c.dropIndexStorage(ctx, cr.specs)
	}
	specs := m.Indexes
	for i := range specs {
		specs[i].State = IndexReady
	}
	if err := c.createIndexStorage(ctx, specs); err != nil {
		_ = c.dropIndexStorage(ctx, specs)
		return err
	}
	if err := c.writeCatalog(ctx, m.Name, m.Incarnation, specs, cr); err != nil {
		_ = c.dropIndexStorage(ctx, specs)
		return err
	}
	if err := create(ctx, m); err != nil {
		if !errors.Is(err, ErrAlreadyExists) {
			_ = c.deleteCatalog(ctx, m.Name)
		}
		_ = c.dropIndexStorage(ctx, specs)
		return err
	}
	return nil
}

// dropIndexed removes what table's indexes stored, after the table.
func (c *Client) dropIndexed(ctx context.Context, table string) error {
	cr, err := c.readCatalog(ctx, table)
	if err != nil || !cr.found {
		return err
	}
	if err := c.dropIndexStorage(ctx, cr.specs); err != nil {
		return err
	}
	return c.deleteCatalog(ctx, table)
}

// AddIndex adds an index to a table, online: once it returns, the index is
// ready, filled from the rows stored before (while writers run). It waits
// out the metadata cache lifetime ([WithMetaCacheTTL]) first, so that every
// client maintains the index before the fill reads the rows: a client with
// a longer lifetime, or one that never expires (≤ 0), may write without
// maintaining it until it reloads the table (then run [Client.Reindex]).
func (c *Client) AddIndex(ctx context.Context, table string, spec IndexSpec) (err error) {
	const op = "AddIndex"
	if err := c.checkOpen(op, table); err != nil {
		return err
	}
	m, err := c.describe(ctx, table)
	if err != nil {
		return annotate(err, op, table)
	}
	next := *m
	spec.State, spec.Storage = "", ""
	next.Indexes = append(slices.Clone(m.Indexes), spec)
	if verr := checkIndexes(&next); verr != nil {
		return annotate(verr, op, table)
	}
	if verr := c.checkAutoIndexed(&next); verr != nil {
		return annotate(verr, op, table)
	}
	cr, err := c.readCatalog(ctx, table)
	if err != nil {
		return annotate(err, op, table)
	}
	added := next.Indexes[len(next.Indexes)-1:]
	added[0].State = IndexWriteOnly
	if err := c.createIndexStorage(ctx, added); err != nil {
		_ = c.dropIndexStorage(ctx, added)
		return annotate(err, op, table)
	}
	if !cr.found || (m.Incarnation != "" && cr.incarnation != m.Incarnation) {
		cr = catalogRow{found: cr.found, gen: cr.gen} // a leftover's specs are not this table's
	}
	if err := c.writeCatalog(ctx, table, m.Incarnation, next.Indexes, cr); err != nil {
		_ = c.dropIndexStorage(ctx, added)
		if errors.Is(err, ErrConditionFailed) {
			err = WrapError(ErrConditionFailed, err, "the table's indexes changed meanwhile; add again")
		}
		return annotate(err, op, table)
	}
	c.forget(table)
	wait := max(c.cacheTTL, 0) + time.Second
	select {
	case <-time.After(wait):
	case <-ctx.Done():
		return ctx.Err()
	}
	nm, err := c.describe(ctx, table)
	if err != nil {
		return annotate(err, op, table)
	}
	c.remember(nm)
	if _, err := c.reindex(ctx, nm, spec.Name, false); err != nil {
		return annotate(err, op, table)
	}
	return annotate(c.setIndexState(ctx, table, spec.Name, IndexReady), op, table)
}

// setIndexState sets one index's state in the catalog.
func (c *Client) setIndexState(ctx context.Context, table, index string, state IndexState) error {
	for range maxUpdateAttempts {
		m, err := c.describe(ctx, table)
		if err != nil {
			return err
		}
		cr, err := c.readCatalog(ctx, table)
		if err != nil {
			return err
		}
		specs := slices.Clone(m.Indexes)
		i := slices.IndexFunc(specs, func(s IndexSpec) bool { return s.Name == index })
		if i < 0 {
			return Errorf(ErrInvalidArgument, "table %q has no index %q", table, index)
		}
		specs[i].State = state
		err = c.writeCatalog(ctx, table, m.Incarnation, specs, cr)
		if !errors.Is(err, ErrConditionFailed) {
			c.forget(table)
			return err
		}
	}
	return Errorf(ErrUnavailable, "table %q: the indexes kept changing", table)
}

// DropIndex removes an index and its entries.
func (c *Client) DropIndex(ctx context.Context, table, index string) error {
	const op = "DropIndex"
	if err := c.checkOpen(op, table); err != nil {
		return err
	}
	for range maxUpdateAttempts {
		m, err := c.describe(ctx, table)
		if err != nil {
			return annotate(err, op, table)
		}
		cr, err := c.readCatalog(ctx, table)
		if err != nil {
			return annotate(err, op, table)
		}
		i := slices.IndexFunc(m.Indexes, func(s IndexSpec) bool { return s.Name == index })
		if i < 0 {
			return annotate(Errorf(ErrInvalidArgument, "table %q has no index %q", table, index), op, table)
		}
		gone := m.Indexes[i]
		specs := slices.Delete(slices.Clone(m.Indexes), i, i+1)
		err = c.writeCatalog(ctx, table, m.Incarnation, specs, cr)
		if errors.Is(err, ErrConditionFailed) {
			continue
		}
		c.forget(table)
		if err != nil {
			return annotate(err, op, table)
		}
		// Writers that have not seen the drop find the entry table gone
		// and skip it (index_write.go).
		return annotate(c.dropIndexStorage(ctx, []IndexSpec{gone}), op, table)
	}
	return annotate(Errorf(ErrUnavailable, "table %q: the indexes kept changing", table), op, table)
}

// indexOf returns m's index of that name.
func indexOf(m *TableMeta, name string) (*IndexSpec, *Error) {
	for i := range m.Indexes {
		if m.Indexes[i].Name == name {
			return &m.Indexes[i], nil
		}
	}
	return nil, invalid("table %q has no index %q", m.Name, name)
}

// randomNonce is an entry stamp's random part (unique, not secret).
func randomNonce() int64 { return mrand.Int64() }
