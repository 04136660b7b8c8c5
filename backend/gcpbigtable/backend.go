package gcpbigtable

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
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

// Options configures a Backend. A nil *Options means the defaults, and
// for [Open] the instance named by nothing: Open needs Project and
// Instance. The fields marked "Open only" configure the clients Open
// builds; [New] refuses them (its clients are already configured) rather
// than ignore them.
type Options struct {
	// Project and Instance name the Bigtable instance (Open only,
	// required).
	Project, Instance string
	// AppProfile is the app profile of data operations (Open only). Empty
	// means the instance's default profile.
	AppProfile string
	// ClientConfig is passed to bigtable.NewClientWithConfig (Open only);
	// AppProfile, when set, overrides its AppProfile.
	ClientConfig bigtable.ClientConfig
	// ClientOptions are passed to both clients (Open only): credentials,
	// endpoint, connection pool.
	ClientOptions []option.ClientOption
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
	owned     bool               // Close closes the clients
	conns     []*grpc.ClientConn // connections Open dialled itself, closed by Close
	cfg       Options
	meta      *bigtable.Table
	metaMu    sync.Mutex
	metaOK    bool     // the metadata table is known to exist
	revPrefix [16]byte // the hex of 8 random bytes, the first half of every revision
	revSeq    atomic.Uint64

	floors driver.CounterFloors // auto-increment counters known to be at least a value

	tablesMu sync.RWMutex
	tables   map[tableKey]*bigtable.Table
	closed   atomic.Bool
}

// maxMessage is the gRPC message size limit the Bigtable client sets for
// its own connections (256 MiB, the service's limit), instead of gRPC's
// default of 4 MiB.
const maxMessage = 1 << 28

// Open connects to the Bigtable instance opts.Project/opts.Instance: it
// creates a data client (with opts.ClientConfig and opts.AppProfile) and an
// admin client from opts.ClientOptions, and closes both on Close. Without
// ClientOptions giving credentials, the clients use application-default
// credentials.
//
// When BIGTABLE_EMULATOR_HOST is set (and ClientOptions hold no connection
// of their own), the clients talk to that emulator, without credentials,
// exactly as bigtable.NewClient does; but Open dials the connections
// itself, with the same 256 MiB message limits the Bigtable client gives
// the connections it dials for an explicit endpoint (the connection the
// client would dial for the emulator keeps gRPC's 4 MiB default, and a row
// over 4 MiB could not be read).
func Open(ctx context.Context, opts *Options) (*Backend, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var cfg Options
	if opts != nil {
		cfg = *opts
	}
	if cfg.Project == "" || cfg.Instance == "" {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "gcpbigtable.Open: Options.Project and Options.Instance are required (got %q/%q)", cfg.Project, cfg.Instance)
	}
	if err := checkOptions(&cfg); err != nil {
		return nil, err
	}
	project, instance := cfg.Project, cfg.Instance
	cc := cfg.ClientConfig
	if cfg.AppProfile != "" {
		cc.AppProfile = cfg.AppProfile
	}
	var conns []*grpc.ClientConn
	closeConns := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	copts := cfg.ClientOptions
	dataOpts, adminOpts := copts, copts
	if addr := os.Getenv("BIGTABLE_EMULATOR_HOST"); addr != "" && !hasConn(copts) {
		for _, o := range []*[]option.ClientOption{&dataOpts, &adminOpts} {
			conn, err := dialEmulator(addr)
			if err != nil {
				closeConns()
				return nil, tablekit.WrapError(tablekit.ErrInvalidArgument, err, "connecting to the Bigtable emulator at BIGTABLE_EMULATOR_HOST")
			}
			conns = append(conns, conn)
			*o = append([]option.ClientOption{option.WithGRPCConn(conn)}, copts...)
		}
		if err := awaitReady(ctx, conns[0], EmulatorConnectTimeout); err != nil {
			closeConns()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "connecting to the Bigtable emulator at BIGTABLE_EMULATOR_HOST=%s", addr)
		}
	}
	client, err := bigtable.NewClientWithConfig(ctx, project, instance, cc, dataOpts...)
	if err != nil {
		closeConns()
		return nil, wrap(ctx, err, "opening the Bigtable data client for %s/%s", project, instance)
	}
	admin, err := bigtable.NewAdminClient(ctx, project, instance, adminOpts...)
	if err != nil {
		client.Close()
		closeConns()
		return nil, wrap(ctx, err, "opening the Bigtable admin client for %s/%s", project, instance)
	}
	b := newBackend(client, admin, cfg)
	b.owned = true
	b.conns = conns
	return b, nil
}

// checkOptions refuses settings out of range and fills in the defaults.
func checkOptions(o *Options) error {
	switch o.GC {
	case GCFull, GCVersionsOnly, GCOff:
	default:
		return tablekit.Errorf(tablekit.ErrInvalidArgument, "gcpbigtable: Options.GC %d is not a GCMode", o.GC)
	}
	if o.GCMargin < 0 {
		return tablekit.Errorf(tablekit.ErrInvalidArgument, "gcpbigtable: Options.GCMargin %v is negative", o.GCMargin)
	}
	if o.Concurrency < 0 {
		return tablekit.Errorf(tablekit.ErrInvalidArgument, "gcpbigtable: Options.Concurrency %d is negative", o.Concurrency)
	}
	if o.MetaTable == "" {
		o.MetaTable = DefaultMetaTable
	}
	if o.GCMargin == 0 {
		o.GCMargin = DefaultGCMargin
	}
	if o.Concurrency == 0 {
		o.Concurrency = 16
	}
	return nil
}

// EmulatorConnectTimeout bounds how long Open waits for the emulator at
// BIGTABLE_EMULATOR_HOST to accept a connection. Open fails with
// ErrUnavailable as soon as the connection is refused (nothing listens on
// the port), and after this long when nothing answers at all. Without the
// wait, a wrong address would hang the first call for ever: the Bigtable
// client retries an unreachable server until the call's context ends.
const EmulatorConnectTimeout = 10 * time.Second

// awaitReady connects conn and waits until it is ready, failing at the
// first connection failure or after timeout (or when ctx ends).
func awaitReady(ctx context.Context, conn *grpc.ClientConn, timeout time.Duration) error {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn.Connect()
	for {
		switch s := conn.GetState(); s {
		case connectivity.Ready:
			return nil
		case connectivity.TransientFailure, connectivity.Shutdown:
			return errors.New("the connection failed: nothing is listening there")
		default:
			if !conn.WaitForStateChange(tctx, s) {
				if err := ctx.Err(); err != nil {
					return err
				}
				return fmt.Errorf("no connection within %v", timeout)
			}
		}
	}
}

// dialEmulator dials the emulator at addr (host:port, with or without a
// scheme, as the Bigtable client accepts it) without credentials and with
// the Bigtable client's message limits.
func dialEmulator(addr string) (*grpc.ClientConn, error) {
	if _, rest, ok := strings.Cut(addr, "://"); ok {
		addr = rest
	}
	return grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage)))
}

// hasConn reports whether opts give a connection of their own
// (option.WithGRPCConn), which then wins over the emulator's.
func hasConn(opts []option.ClientOption) bool {
	connType := reflect.TypeOf(option.WithGRPCConn(nil))
	for _, o := range opts {
		if reflect.TypeOf(o) == connType {
			return true
		}
	}
	return false
}

// New returns a Backend over existing clients, which the caller keeps
// owning (Close leaves them open). admin may be nil: then CreateTable,
// UpdateTable and DeleteTable fail with ErrUnimplemented and everything
// else works. opts (nil for the defaults) may not set the fields marked
// "Open only": the clients are already configured, and New refuses such a
// field with ErrInvalidArgument naming it rather than ignore it.
func New(client *bigtable.Client, admin *bigtable.AdminClient, opts *Options) (*Backend, error) {
	if client == nil {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "gcpbigtable.New: nil *bigtable.Client")
	}
	var cfg Options
	if opts != nil {
		cfg = *opts
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"Project", cfg.Project != ""},
		{"Instance", cfg.Instance != ""},
		{"AppProfile", cfg.AppProfile != ""},
		{"ClientConfig", !reflect.ValueOf(cfg.ClientConfig).IsZero()},
		{"ClientOptions", len(cfg.ClientOptions) > 0},
	} {
		if f.set {
			return nil, tablekit.Errorf(tablekit.ErrInvalidArgument,
				"gcpbigtable.New: Options.%s configures the clients Open builds and cannot apply to existing clients", f.name)
		}
	}
	if err := checkOptions(&cfg); err != nil {
		return nil, err
	}
	return newBackend(client, admin, cfg), nil
}

// newBackend builds the Backend over clients; cfg has passed checkOptions.
func newBackend(client *bigtable.Client, admin *bigtable.AdminClient, cfg Options) *Backend {
	b := &Backend{client: client, admin: admin, cfg: cfg, tables: map[tableKey]*bigtable.Table{}}
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

// Table returns the native handle of the Bigtable table that holds the
// rows of a tablekit table now: it reads the table's metadata row for its
// incarnation (see [TableID]).
func (b *Backend) Table(ctx context.Context, name string) (*bigtable.Table, error) {
	m, err := b.readMeta(ctx, name)
	if err != nil {
		return nil, err
	}
	return b.table(m.Name, m.Incarnation), nil
}

// Close closes the clients if Open created them. The Client calls it once
// and makes no call after it; a call made anyway fails (with
// ErrUnavailable when the clients are closed) and never panics.
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
	for _, c := range b.conns {
		_ = c.Close() // the clients may have closed it already
	}
	return err
}

func (b *Backend) needAdmin() error {
	if b.admin == nil {
		return tablekit.Errorf(tablekit.ErrUnimplemented, "the Bigtable backend has no admin client")
	}
	return nil
}

// tableKey names a Bigtable table by what its id is made of, so that a
// lookup builds no id.
type tableKey struct{ name, incarnation string }

// table returns the cached handle of the Bigtable table of a portable name
// and incarnation.
func (b *Backend) table(name, incarnation string) *bigtable.Table {
	k := tableKey{name, incarnation}
	b.tablesMu.RLock()
	t, ok := b.tables[k]
	b.tablesMu.RUnlock()
	if ok {
		return t
	}
	t = b.client.Open(TableID(name, incarnation))
	b.tablesMu.Lock()
	b.tables[k] = t
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
	return bigtable.UnionPolicy(versions, bigtable.MaxAgePolicy(opts.TTL+b.cfg.GCMargin))
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

// CreateTable implements tablekit.Backend. The metadata row (schema,
// options, Incarnation and Generation) is written first, atomically only
// if absent, so it decides between concurrent creators; then the Bigtable
// table of the name and incarnation is created with its two families. If
// that fails the metadata row is removed again. An existing Bigtable table
// of that id — another program's: ids carry the incarnation, so no earlier
// incarnation has it — is never taken over or deleted: CreateTable fails
// with ErrAlreadyExists naming it.
func (b *Backend) CreateTable(ctx context.Context, meta *tablekit.TableMeta) error {
	if err := b.needAdmin(); err != nil {
		return err
	}
	if err := b.ensureMeta(ctx); err != nil {
		return err
	}
	set := bigtable.NewMutation()
	set.Set(famTable, qualSchema, 0, encodeSchema(meta))
	set.Set(famTable, qualOptions, 0, encodeOptions(meta.Options))
	if meta.Incarnation != "" {
		set.Set(famTable, qualIncarnation, 0, []byte(meta.Incarnation))
	}
	gen := max(meta.Generation, 1)
	set.Set(famTable, qualGeneration, 0, strconv.AppendInt(nil, gen, 10))
	var exists bool
	if err := b.meta.Apply(ctx, meta.Name, bigtable.NewCondMutation(bigtable.PassAllFilter(), nil, set), bigtable.GetCondMutationResult(&exists)); err != nil {
		return wrap(ctx, err, "writing the metadata of table %q", meta.Name)
	}
	if exists {
		return tablekit.Errorf(tablekit.ErrAlreadyExists, "table %q already exists", meta.Name)
	}
	id := TableID(meta.Name, meta.Incarnation)
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
	// Undo the metadata row so the name is free again (only this
	// creation's: a concurrent DeleteTable and CreateTable may have
	// replaced it). A fresh context: the caller's may be what failed.
	undo := bigtable.NewMutation()
	undo.DeleteRow()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	_ = b.meta.Apply(cctx, meta.Name, bigtable.NewCondMutation(metaIs(meta.Incarnation, gen), undo, nil))
	cancel()
	if isCode(err, codes.AlreadyExists) {
		return tablekit.WrapError(tablekit.ErrAlreadyExists, err,
			"Bigtable table %q exists without tablekit metadata; tablekit never takes over or deletes such a table: if it is yours to drop, delete it with cbt deletetable %s", id, id)
	}
	return wrap(ctx, err, "creating Bigtable table %q", id)
}

// valueIs passes a cell whose value is exactly v.
func valueIs(v []byte) bigtable.Filter {
	end := make([]byte, len(v)+1) // v + 0x00: the value range [v, end) is v alone
	copy(end, v)
	return bigtable.ValueRangeFilter(v, end)
}

// metaColumn passes the metadata row's cell t:qual.
func metaColumn(qual string) bigtable.Filter {
	return qualifierFilter(famTable, qual)
}

// metaIs is the predicate "the metadata row is that of this incarnation at
// this generation": it passes a cell iff t:incarnation holds incarnation
// (or, for the empty incarnation, the row has none but has a schema) and
// t:generation holds generation (or, for generation 1, the row has none).
func metaIs(incarnation string, generation int64) bigtable.Filter {
	gen := strconv.AppendInt(nil, generation, 10)
	genOK := bigtable.ChainFilters(metaColumn(qualGeneration), valueIs(gen))
	if generation == 1 {
		// No t:generation means 1: pass the schema instead.
		genOK = bigtable.ConditionFilter(metaColumn(qualGeneration), genOK, metaColumn(qualSchema))
	}
	if incarnation == "" {
		return bigtable.ConditionFilter(metaColumn(qualIncarnation), bigtable.BlockAllFilter(), genOK)
	}
	return bigtable.ConditionFilter(bigtable.ChainFilters(metaColumn(qualIncarnation), valueIs([]byte(incarnation))), genOK, bigtable.BlockAllFilter())
}

// readMeta reads a table's metadata row.
func (b *Backend) readMeta(ctx context.Context, name string) (*tablekit.TableMeta, error) {
	row, err := b.meta.ReadRow(ctx, name, bigtable.RowFilter(bigtable.ChainFilters(familyFilter(famTable), bigtable.LatestNFilter(1))))
	if err != nil {
		if isCode(err, codes.NotFound) && ctx.Err() == nil {
			return nil, tablekit.WrapError(tablekit.ErrTableNotFound, err, "table %q does not exist (no metadata table %q)", name, b.cfg.MetaTable)
		}
		return nil, wrap(ctx, err, "reading the metadata of table %q", name)
	}
	var schema, options, incarnation, generation []byte
	for _, it := range row[famTable] {
		switch it.Column {
		case famTable + ":" + qualSchema:
			schema = it.Value
		case famTable + ":" + qualOptions:
			options = it.Value
		case famTable + ":" + qualIncarnation:
			incarnation = it.Value
		case famTable + ":" + qualGeneration:
			generation = it.Value
		}
	}
	if schema == nil || options == nil {
		return nil, tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	m, err := decodeMeta(name, schema, options, incarnation, generation)
	if err != nil {
		return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "")
	}
	return m, nil
}

// DescribeTable implements tablekit.Backend: the metadata row, with the
// table's Incarnation (empty for a table made before incarnations) and
// Generation.
func (b *Backend) DescribeTable(ctx context.Context, name string) (*tablekit.TableMeta, error) {
	return b.readMeta(ctx, name)
}

// ListTables implements tablekit.Backend: the row keys of the metadata table.
func (b *Backend) ListTables(ctx context.Context) ([]string, error) {
	names := []string{}
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

// UpdateTable implements tablekit.Backend. One CheckAndMutateRow on the
// metadata row replaces t:options and sets t:generation to
// req.Meta.Generation+1 if the row still holds req.Meta's incarnation and
// generation (metaIs); then the attribute family's GC policy is set to
// match. When the check fails, the row read again says why: another
// incarnation, or none, is ErrTableNotFound, another generation
// ErrConditionFailed.
func (b *Backend) UpdateTable(ctx context.Context, req *tablekit.UpdateTableRequest) (*tablekit.TableMeta, error) {
	if err := b.needAdmin(); err != nil {
		return nil, err
	}
	m := req.Meta
	next := *m
	next.Key = slices.Clone(m.Key)
	next.Options = req.Options
	next.Generation = max(m.Generation, 1) + 1
	set := bigtable.NewMutation()
	set.Set(famTable, qualOptions, 0, encodeOptions(next.Options))
	set.Set(famTable, qualGeneration, 0, strconv.AppendInt(nil, next.Generation, 10))
	var matched bool
	err := b.meta.Apply(ctx, m.Name, bigtable.NewCondMutation(metaIs(m.Incarnation, max(m.Generation, 1)), set, nil), bigtable.GetCondMutationResult(&matched))
	if err != nil {
		if isCode(err, codes.NotFound) && ctx.Err() == nil {
			return nil, tablekit.WrapError(tablekit.ErrTableNotFound, err, "table %q does not exist", m.Name)
		}
		return nil, wrap(ctx, err, "writing the options of table %q", m.Name)
	}
	if !matched {
		cur, err := b.readMeta(ctx, m.Name)
		switch {
		case err != nil:
			return nil, err
		case cur.Incarnation != m.Incarnation:
			return nil, tablekit.Errorf(tablekit.ErrTableNotFound, "table %q was deleted and created again", m.Name)
		}
		return nil, tablekit.Errorf(tablekit.ErrConditionFailed, "table %q: options changed (generation %d, expected %d)", m.Name, cur.Generation, m.Generation)
	}
	if b.cfg.GC != GCOff {
		id := TableID(m.Name, m.Incarnation)
		if err := b.admin.SetGCPolicy(ctx, id, famCells, b.gcPolicy(next.Options)); err != nil {
			return nil, wrap(ctx, err, "setting the GC policy of Bigtable table %q", id)
		}
	}
	return &next, nil
}

// DeleteTable implements tablekit.Backend. The Bigtable table goes first
// (a missing one is fine: an earlier DeleteTable, or a CreateTable, may
// have stopped half way), then the metadata row, so an interrupted
// DeleteTable leaves the table listed and a retry finishes it. The
// metadata row is deleted only if it still describes the incarnation whose
// Bigtable table was deleted, so of concurrent deleters one succeeds and
// the others get ErrTableNotFound, and a table created again meanwhile is
// left alone.
func (b *Backend) DeleteTable(ctx context.Context, name string) error {
	if err := b.needAdmin(); err != nil {
		return err
	}
	m, err := b.readMeta(ctx, name)
	if err != nil {
		return err
	}
	id := TableID(name, m.Incarnation)
	if err := b.admin.DeleteTable(ctx, id); err != nil && !isCode(err, codes.NotFound) {
		return wrap(ctx, err, "deleting Bigtable table %q", id)
	}
	b.tablesMu.Lock()
	delete(b.tables, tableKey{name, m.Incarnation})
	b.tablesMu.Unlock()
	del := bigtable.NewMutation()
	del.DeleteRow()
	var exists bool
	// The row of this incarnation: t:incarnation as read, or (a table
	// made before incarnations) none, and a schema.
	pred := bigtable.ConditionFilter(metaColumn(qualIncarnation), bigtable.BlockAllFilter(), metaColumn(qualSchema))
	if m.Incarnation != "" {
		pred = bigtable.ChainFilters(metaColumn(qualIncarnation), valueIs([]byte(m.Incarnation)))
	}
	err = b.meta.Apply(ctx, name, bigtable.NewCondMutation(pred, del, nil), bigtable.GetCondMutationResult(&exists))
	if err != nil {
		return wrap(ctx, err, "deleting the metadata of table %q", name)
	}
	if !exists {
		return tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	return nil
}
