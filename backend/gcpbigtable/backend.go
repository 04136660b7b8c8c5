package gcpbigtable

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"

	"github.com/tablekit/tablekit"
)

// GCMode says which garbage-collection policies the adapter sets on a data
// table's attribute family. Reads and conditions never depend on them: they
// hide invisible cells themselves.
type GCMode int

const (
	// GCFull (the default) sets MaxVersions(MaxVersions) and, when the
	// table has a TTL, MaxAge(TTL + GCMargin), joined as a union, so
	// Bigtable reclaims both kinds of invisible cell.
	GCFull GCMode = iota
	// GCVersionsOnly sets only MaxVersions(MaxVersions): it never looks at
	// the wall clock, so it is safe when versions come from a clock other
	// than the server's (a test's ManualClock).
	GCVersionsOnly
	// GCOff sets no policy and never calls ModifyColumnFamilies; nothing is
	// reclaimed. The conformance harness uses it, so the emulator's
	// wall-clock GC loop never touches its tables.
	GCOff
)

// DefaultGCMargin is how much longer than the TTL a cell is kept before
// MaxAge collects it: a generous bound on the skew between the clocks that
// stamp versions and Bigtable's own clock.
const DefaultGCMargin = 24 * time.Hour

// DefaultMetaTable is the Bigtable table that holds every tablekit table's
// schema and options. '.' is not allowed in portable names, so it never
// collides with a data table.
const DefaultMetaTable = "tablekit.meta"

// Config configures a Backend. The zero Config is ready to use.
type Config struct {
	// AppProfile is the app profile of data operations when Open creates
	// the client (New uses the client's own). Empty means the instance's
	// default profile.
	AppProfile string
	// ClientConfig is passed to bigtable.NewClientWithConfig by Open;
	// AppProfile, when set, overrides its AppProfile.
	ClientConfig bigtable.ClientConfig
	// MetaTable is the id of the metadata table (default DefaultMetaTable).
	MetaTable string
	// GC chooses the garbage-collection policies (default GCFull).
	GC GCMode
	// GCMargin is added to the TTL in the MaxAge policy (default DefaultGCMargin).
	GCMargin time.Duration
	// Concurrency bounds the single-row calls a batch runs at once
	// (default 16).
	Concurrency int
}

// Backend is a tablekit.Backend on Google Cloud Bigtable. It is safe for
// concurrent use.
type Backend struct {
	client    *bigtable.Client
	admin     *bigtable.AdminClient
	owned     bool // Close closes the clients
	cfg       Config
	meta      *bigtable.Table
	metaMu    sync.Mutex
	metaOK    bool     // the metadata table is known to exist
	revPrefix [16]byte // the hex of 8 random bytes, the first half of every revision
	revSeq    atomic.Uint64

	tablesMu sync.RWMutex
	tables   map[string]*bigtable.Table
	closed   atomic.Bool
}

var _ tablekit.Backend = (*Backend)(nil)

// Open connects to a Bigtable instance: it creates a data client (with
// cfg.ClientConfig and cfg.AppProfile) and an admin client from opts, and
// closes both on Close.
func Open(ctx context.Context, project, instance string, cfg Config, opts ...option.ClientOption) (*Backend, error) {
	cc := cfg.ClientConfig
	if cfg.AppProfile != "" {
		cc.AppProfile = cfg.AppProfile
	}
	client, err := bigtable.NewClientWithConfig(ctx, project, instance, cc, opts...)
	if err != nil {
		return nil, wrap(ctx, err, "opening the Bigtable data client for %s/%s", project, instance)
	}
	admin, err := bigtable.NewAdminClient(ctx, project, instance, opts...)
	if err != nil {
		client.Close()
		return nil, wrap(ctx, err, "opening the Bigtable admin client for %s/%s", project, instance)
	}
	b := New(client, admin, cfg)
	b.owned = true
	return b, nil
}

// New returns a Backend over existing clients, which the caller keeps
// owning (Close leaves them open). admin may be nil: then CreateTable,
// UpdateTable and DeleteTable fail with ErrUnimplemented and everything
// else works.
func New(client *bigtable.Client, admin *bigtable.AdminClient, cfg Config) *Backend {
	if cfg.MetaTable == "" {
		cfg.MetaTable = DefaultMetaTable
	}
	if cfg.GCMargin <= 0 {
		cfg.GCMargin = DefaultGCMargin
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 16
	}
	b := &Backend{client: client, admin: admin, cfg: cfg, tables: map[string]*bigtable.Table{}}
	b.meta = client.Open(cfg.MetaTable)
	var seed [8]byte
	if _, err := rand.Read(seed[:]); err != nil {
		binary.BigEndian.PutUint64(seed[:], uint64(time.Now().UnixNano()))
	}
	hex.Encode(b.revPrefix[:], seed[:])
	return b
}

// Client returns the native data client.
func (b *Backend) Client() *bigtable.Client { return b.client }

// AdminClient returns the native admin client (nil if none was given).
func (b *Backend) AdminClient() *bigtable.AdminClient { return b.admin }

// Table returns the native handle of a tablekit table's Bigtable table.
func (b *Backend) Table(name string) *bigtable.Table { return b.table(name) }

// Close closes the clients if Open created them. Later calls fail with
// ErrUnavailable.
func (b *Backend) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	if !b.owned {
		return nil
	}
	err := b.client.Close()
	if b.admin != nil {
		if aerr := b.admin.Close(); err == nil {
			err = aerr
		}
	}
	return err
}

func (b *Backend) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.closed.Load() {
		return tablekit.Errorf(tablekit.ErrUnavailable, "the Bigtable backend is closed")
	}
	return nil
}

func (b *Backend) needAdmin(ctx context.Context) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	if b.admin == nil {
		return tablekit.Errorf(tablekit.ErrUnimplemented, "the Bigtable backend has no admin client")
	}
	return nil
}

// table returns the cached data-table handle of a portable name.
func (b *Backend) table(name string) *bigtable.Table {
	b.tablesMu.RLock()
	t, ok := b.tables[name]
	b.tablesMu.RUnlock()
	if ok {
		return t
	}
	t = b.client.Open(TableID(name))
	b.tablesMu.Lock()
	b.tables[name] = t
	b.tablesMu.Unlock()
	return t
}

// revLen is the length of a revision: 32 hex digits.
const revLen = 32

// appendRev appends a revision value for this write to buf and returns it
// (capped) and the grown buf: the backend's random seed and a counter, in
// hex so cbt prints it. A backend never repeats one, and two backends share
// a seed with probability 2^-64.
func (b *Backend) appendRev(buf []byte) (rev, grown []byte) {
	start := len(buf)
	buf = append(buf, b.revPrefix[:]...)
	var ctr [8]byte
	binary.BigEndian.PutUint64(ctr[:], b.revSeq.Add(1))
	buf = hex.AppendEncode(buf, ctr[:])
	return buf[start:len(buf):len(buf)], buf
}

// gcPolicy is the policy of the attribute family for opts.
func (b *Backend) gcPolicy(opts tablekit.TableOptions) bigtable.GCPolicy {
	switch b.cfg.GC {
	case GCOff:
		return bigtable.NoGcPolicy()
	case GCVersionsOnly:
		return bigtable.MaxVersionsPolicy(opts.MaxVersions)
	}
	versions := bigtable.MaxVersionsPolicy(opts.MaxVersions)
	if opts.TTL == tablekit.NoExpiry {
		return versions
	}
	return bigtable.UnionPolicy(versions, bigtable.MaxAgePolicy(time.Duration(opts.TTL)*time.Second+b.cfg.GCMargin))
}

// metaPolicy is the policy of the m family: its cells are stamped 0 and
// overwritten in place, so MaxVersions(1) reclaims nothing but states the
// shape. It never has a MaxAge: timestamp 0 is always "old".
func (b *Backend) metaPolicy() bigtable.GCPolicy {
	if b.cfg.GC == GCOff {
		return bigtable.NoGcPolicy()
	}
	return bigtable.MaxVersionsPolicy(1)
}

// ensureMeta creates the metadata table once, if it does not exist.
func (b *Backend) ensureMeta(ctx context.Context) error {
	b.metaMu.Lock()
	defer b.metaMu.Unlock()
	if b.metaOK {
		return nil
	}
	err := b.admin.CreateTableFromConf(ctx, &bigtable.TableConf{
		TableID:        b.cfg.MetaTable,
		ColumnFamilies: map[string]bigtable.Family{famTable: {}},
	})
	if err != nil && !isCode(err, codes.AlreadyExists) {
		return wrap(ctx, err, "creating the metadata table %q", b.cfg.MetaTable)
	}
	b.metaOK = true
	return nil
}

// CreateTable implements tablekit.Backend. The metadata row is written
// first, atomically only if absent, so it decides between concurrent
// creators; then the Bigtable table is created with its two families. An
// existing Bigtable table of that id without a metadata row — another
// program's, or (rarely) the remains of a DeleteTable that raced this
// CreateTable — is never taken over or deleted: CreateTable fails with
// ErrAlreadyExists naming it, the metadata row undone.
func (b *Backend) CreateTable(ctx context.Context, meta *tablekit.TableMeta) error {
	if err := b.needAdmin(ctx); err != nil {
		return err
	}
	if err := b.ensureMeta(ctx); err != nil {
		return err
	}
	set := bigtable.NewMutation()
	set.Set(famTable, qualSchema, 0, encodeSchema(meta))
	set.Set(famTable, qualOptions, 0, encodeOptions(meta.Options))
	var exists bool
	if err := b.meta.Apply(ctx, meta.Name, bigtable.NewCondMutation(bigtable.PassAllFilter(), nil, set), bigtable.GetCondMutationResult(&exists)); err != nil {
		return wrap(ctx, err, "writing the metadata of table %q", meta.Name)
	}
	if exists {
		return tablekit.Errorf(tablekit.ErrAlreadyExists, "table %q already exists", meta.Name)
	}
	id := TableID(meta.Name)
	conf := &bigtable.TableConf{
		TableID: id,
		ColumnFamilies: map[string]bigtable.Family{
			famCells: {GCPolicy: b.gcPolicy(meta.Options)},
			famMeta:  {GCPolicy: b.metaPolicy()},
		},
	}
	err := b.admin.CreateTableFromConf(ctx, conf)
	if err == nil {
		return nil
	}
	// Undo the metadata row so the name is free again. A fresh context:
	// the caller's may be what failed.
	undo := bigtable.NewMutation()
	undo.DeleteRow()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	_ = b.meta.Apply(cctx, meta.Name, undo)
	cancel()
	if isCode(err, codes.AlreadyExists) {
		return tablekit.WrapError(tablekit.ErrAlreadyExists, err,
			"Bigtable table %q exists without tablekit metadata; tablekit never takes over or deletes such a table: if it is yours to drop, delete it with cbt deletetable %s", id, id)
	}
	return wrap(ctx, err, "creating Bigtable table %q", id)
}

// readMeta reads a table's metadata row.
func (b *Backend) readMeta(ctx context.Context, name string) (*tablekit.TableMeta, error) {
	row, err := b.meta.ReadRow(ctx, name, bigtable.RowFilter(bigtable.FamilyFilter(famTable)))
	if err != nil {
		if isCode(err, codes.NotFound) && ctx.Err() == nil {
			return nil, tablekit.WrapError(tablekit.ErrTableNotFound, err, "table %q does not exist (no metadata table %q)", name, b.cfg.MetaTable)
		}
		return nil, wrap(ctx, err, "reading the metadata of table %q", name)
	}
	var schema, options []byte
	for _, it := range row[famTable] {
		switch it.Column {
		case famTable + ":" + qualSchema:
			schema = it.Value
		case famTable + ":" + qualOptions:
			options = it.Value
		}
	}
	if schema == nil || options == nil {
		return nil, tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	m, err := decodeMeta(name, schema, options)
	if err != nil {
		return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "")
	}
	return m, nil
}

// DescribeTable implements tablekit.Backend.
func (b *Backend) DescribeTable(ctx context.Context, name string) (*tablekit.TableMeta, error) {
	if err := b.check(ctx); err != nil {
		return nil, err
	}
	return b.readMeta(ctx, name)
}

// ListTables implements tablekit.Backend: the row keys of the metadata table.
func (b *Backend) ListTables(ctx context.Context) ([]string, error) {
	if err := b.check(ctx); err != nil {
		return nil, err
	}
	var names []string
	err := b.meta.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		names = append(names, r.Key())
		return true
	}, bigtable.RowFilter(bigtable.ChainFilters(bigtable.CellsPerRowLimitFilter(1), bigtable.StripValueFilter())))
	if err != nil {
		if isCode(err, codes.NotFound) && ctx.Err() == nil {
			return []string{}, nil
		}
		return nil, wrap(ctx, err, "listing tables in %q", b.cfg.MetaTable)
	}
	slices.Sort(names)
	return names, nil
}

// UpdateTable implements tablekit.Backend: it replaces t:options if the
// table exists, then sets the family's GC policy to match.
func (b *Backend) UpdateTable(ctx context.Context, name string, opts tablekit.TableOptions) error {
	if err := b.needAdmin(ctx); err != nil {
		return err
	}
	set := bigtable.NewMutation()
	set.Set(famTable, qualOptions, 0, encodeOptions(opts))
	var exists bool
	err := b.meta.Apply(ctx, name, bigtable.NewCondMutation(bigtable.ColumnFilter(qualSchema), set, nil), bigtable.GetCondMutationResult(&exists))
	if err != nil {
		if isCode(err, codes.NotFound) && ctx.Err() == nil {
			return tablekit.WrapError(tablekit.ErrTableNotFound, err, "table %q does not exist", name)
		}
		return wrap(ctx, err, "writing the options of table %q", name)
	}
	if !exists {
		return tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	if b.cfg.GC == GCOff {
		return nil
	}
	if err := b.admin.SetGCPolicy(ctx, TableID(name), famCells, b.gcPolicy(opts)); err != nil {
		return wrap(ctx, err, "setting the GC policy of Bigtable table %q", TableID(name))
	}
	return nil
}

// DeleteTable implements tablekit.Backend. The Bigtable table goes first
// (a missing one is fine: an earlier DeleteTable, or a CreateTable, may
// have stopped half way), then the metadata row, so an interrupted
// DeleteTable leaves the table listed and a retry finishes it. The
// metadata row is deleted only if still there, so of concurrent deleters
// one succeeds and the others get ErrTableNotFound.
func (b *Backend) DeleteTable(ctx context.Context, name string) error {
	if err := b.needAdmin(ctx); err != nil {
		return err
	}
	if _, err := b.readMeta(ctx, name); err != nil {
		return err
	}
	if err := b.admin.DeleteTable(ctx, TableID(name)); err != nil && !isCode(err, codes.NotFound) {
		return wrap(ctx, err, "deleting Bigtable table %q", TableID(name))
	}
	b.tablesMu.Lock()
	delete(b.tables, name)
	b.tablesMu.Unlock()
	del := bigtable.NewMutation()
	del.DeleteRow()
	var exists bool
	err := b.meta.Apply(ctx, name, bigtable.NewCondMutation(bigtable.ColumnFilter(qualSchema), del, nil), bigtable.GetCondMutationResult(&exists))
	if err != nil {
		return wrap(ctx, err, "deleting the metadata of table %q", name)
	}
	if !exists {
		return tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	return nil
}
