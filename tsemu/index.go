package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"slices"
	"sync"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/tsproto"
)

// Secondary indexes, global and local, as CreateTable (index_metas),
// CreateIndex and DeleteIndex define them. An index is a table of the
// Backend, named as the index, whose primary key is the index's
// primary_key followed by the base table's key columns it lacks, and whose
// attributes are its defined_column values. The server keeps it in step
// with its base table on every write: writes to a base table with indexes
// are serialized, read the row before and after, and move its index rows.
// Both update modes behave as synchronous. Index rows carry the time of the
// write as their versions. GetRow and GetRange read an index table as any
// other; writes to it are refused.

// tableIndexes is a table's secondary-index state.
type tableIndexes struct {
	metas  []*otsprotocol.IndexMeta // of a base table, in creation order
	baseOf string                   // of an index table: its base table
	mu     *sync.Mutex              // of a base table: serializes its writes
}

func (t tableIndexes) indexed() bool { return len(t.metas) > 0 }

// indexDef validates an index of base (with its defined columns) and
// returns it as DescribeTable reports it (the full primary key, sync
// phase ISP_INCR) and the meta of its table.
func indexDef(base *tablekit.TableMeta, defined []definedColumn, im *otsprotocol.IndexMeta) (*otsprotocol.IndexMeta, tablekit.TableMeta, *otsError) {
	var tm tablekit.TableMeta
	name := im.GetName()
	if oe := checkTableName(name); oe != nil {
		return nil, tm, oe
	}
	if len(im.PrimaryKey) == 0 {
		return nil, tm, paramErr("The primary key of index: '%s' is empty.", name)
	}
	typeOf := func(col string) (tablekit.Type, bool, *otsError) {
		for _, kc := range base.Key {
			if kc.Name == col {
				return kc.Type, true, nil
			}
		}
		for _, dc := range defined {
			if dc.name != col {
				continue
			}
			if t, ok := tsproto.DefinedColumnTypes.FromWire(otsprotocol.DefinedColumnType(dc.typ)); ok && t.IsKeyType() {
				return t, false, nil
			}
			return 0, false, paramErr("The type of column: '%s' cannot be a primary key of index: '%s'.", col, name)
		}
		return 0, false, paramErr("Column: '%s' of index: '%s' is neither a primary key nor a defined column of table: '%s'.", col, name, base.Name)
	}
	local := im.GetIndexType() == otsprotocol.IndexType_IT_LOCAL_INDEX
	if local && im.PrimaryKey[0] != base.Key[0].Name {
		return nil, tm, paramErr("The first primary key of local index: '%s' must be the first primary key of table: '%s'.", name, base.Name)
	}
	full := slices.Clone(im.PrimaryKey)
	for _, kc := range base.Key {
		if !slices.Contains(full, kc.Name) {
			full = append(full, kc.Name)
		}
	}
	tm = tablekit.TableMeta{Name: name, Options: tablekit.TableOptions{
		TTL: tablekit.NoExpiry, MaxVersions: 1, MaxVersionOffset: tablekit.DefaultMaxVersionOffset,
	}}
	for i, col := range full {
		if slices.Contains(full[:i], col) {
			return nil, tm, paramErr("Duplicated primary key: '%s' of index: '%s'.", col, name)
		}
		t, _, oe := typeOf(col)
		if oe != nil {
			return nil, tm, oe
		}
		tm.Key = append(tm.Key, tablekit.KeyColumn{Name: col, Type: t})
	}
	if len(tm.Key) > tablekit.MaxKeyColumns {
		return nil, tm, paramErr("The number of primary key columns of index: '%s' exceeds %d.", name, tablekit.MaxKeyColumns)
	}
	for i, col := range im.DefinedColumn {
		if slices.Contains(full, col) || slices.Contains(im.DefinedColumn[:i], col) {
			return nil, tm, paramErr("Duplicated defined column: '%s' of index: '%s'.", col, name)
		}
		if !slices.ContainsFunc(defined, func(d definedColumn) bool { return d.name == col }) {
			return nil, tm, paramErr("Column: '%s' of index: '%s' is not a defined column of table: '%s'.", col, name, base.Name)
		}
	}
	mode := im.GetIndexUpdateMode()
	if local && im.IndexUpdateMode == nil {
		mode = otsprotocol.IndexUpdateMode_IUM_SYNC_INDEX
	}
	out := &otsprotocol.IndexMeta{
		Name: proto.String(name), PrimaryKey: full, DefinedColumn: slices.Clone(im.DefinedColumn),
		IndexUpdateMode: mode.Enum(), IndexType: im.GetIndexType().Enum(),
		IndexSyncPhase: otsprotocol.IndexSyncPhase_ISP_INCR.Enum(),
	}
	return out, tm, nil
}

// indexRow is the row of index im (whose table has schema ikey) for the
// base row key with cells cols; ok=false when the row has no index row (a
// column of the index key is missing or of another type).
func indexRow(im *otsprotocol.IndexMeta, ikey tablekit.KeySchema, key tablekit.PrimaryKey, cols []tablekit.Column) (tablekit.PrimaryKey, []tablekit.Column, bool) {
	latest := func(name string) (tablekit.Value, bool) {
		for _, p := range key {
			if p.Name == name {
				return p.Value, true
			}
		}
		for _, c := range cols { // newest version first
			if c.Name == name {
				return c.Value, true
			}
		}
		return tablekit.Value{}, false
	}
	ik := make(tablekit.PrimaryKey, len(ikey))
	for i, kc := range ikey {
		v, ok := latest(kc.Name)
		if !ok || v.Type() != kc.Type {
			return nil, nil, false
		}
		ik[i] = tablekit.KeyPart{Name: kc.Name, Value: v}
	}
	var attrs []tablekit.Column
	for _, dc := range im.DefinedColumn {
		if v, ok := latest(dc); ok {
			attrs = append(attrs, tablekit.Column{Name: dc, Value: v})
		}
	}
	return ik, attrs, true
}

// rowState is a base row as its indexes see it: whether it exists, and
// the newest version of each of its cells.
type rowState struct {
	found bool
	cols  []tablekit.Column
}

// latestRow reads the newest version of every cell of a row.
func (s *Server) latestRow(ctx context.Context, table string, key tablekit.PrimaryKey) (rowState, error) {
	r, found, err := s.client.Table(table).GetRow(ctx, key, tablekit.MaxVersions(1))
	if err != nil || !found {
		return rowState{}, err
	}
	return rowState{found: true, cols: r.Columns}, nil
}

// syncIndexes moves the index rows of base row key from what old gave to
// what cur gives.
func (s *Server) syncIndexes(ctx context.Context, metas []*otsprotocol.IndexMeta, key tablekit.PrimaryKey, old, cur rowState) error {
	for _, im := range metas {
		imeta, oe := s.meta(ctx, im.GetName())
		if oe != nil {
			return oe
		}
		t := s.client.Table(im.GetName())
		ok, okAttrs, hadOld := indexRow(im, imeta.Key, key, old.cols)
		hadOld = hadOld && old.found
		nk, attrs, hasNew := indexRow(im, imeta.Key, key, cur.cols)
		hasNew = hasNew && cur.found
		if hadOld && (!hasNew || tablekit.CompareKeys(ok, nk) != 0) {
			if err := t.DeleteRow(ctx, ok); err != nil {
				return err
			}
		}
		if hasNew && (!hadOld || tablekit.CompareKeys(ok, nk) != 0 || !sameCells(okAttrs, attrs)) {
			if err := t.PutRow(ctx, nk, attrs); err != nil {
				return err
			}
		}
	}
	return nil
}

func sameCells(a, b []tablekit.Column) bool {
	return slices.EqualFunc(a, b, func(x, y tablekit.Column) bool {
		return x.Name == y.Name && x.Value.Equal(y.Value)
	})
}

// indexedApply applies w to a base table with indexes and brings them in
// step. The caller holds the table's index lock.
func (s *Server) indexedApply(ctx context.Context, idx tableIndexes, w *write) ([]tablekit.Column, error) {
	var old rowState // a row whose key the Backend assigns is new
	if !hasPlaceholder(w.key) {
		var err error
		if old, err = s.latestRow(ctx, w.bw.Table, w.key); err != nil {
			return nil, err
		}
	}
	incs, err := s.apply(ctx, w)
	if err != nil {
		return nil, err
	}
	cur, err := s.latestRow(ctx, w.bw.Table, w.key)
	if err != nil {
		return nil, err
	}
	return incs, s.syncIndexes(ctx, idx.metas, w.key, old, cur)
}

// backfill writes the index rows of every row of base.
func (s *Server) backfill(ctx context.Context, base *tablekit.TableMeta, im *otsprotocol.IndexMeta) error {
	start := make(tablekit.PrimaryKey, len(base.Key))
	end := make(tablekit.PrimaryKey, len(base.Key))
	for i, kc := range base.Key {
		start[i] = tablekit.KeyPart{Name: kc.Name, Value: tablekit.InfMin}
		end[i] = tablekit.KeyPart{Name: kc.Name, Value: tablekit.InfMax}
	}
	for r, err := range s.client.Table(base.Name).Rows(ctx, start, end, tablekit.MaxVersions(1)) {
		if err != nil {
			return err
		}
		if err := s.syncIndexes(ctx, []*otsprotocol.IndexMeta{im}, r.Key, rowState{}, rowState{found: true, cols: r.Columns}); err != nil {
			return err
		}
	}
	return nil
}

// addIndexes creates the tables of indexes (already validated by
// indexDef) of base and records them.
func (s *Server) addIndexes(ctx context.Context, base *tablekit.TableMeta, metas []*otsprotocol.IndexMeta, tables []tablekit.TableMeta, fill bool) error {
	for i, tm := range tables {
		if err := s.client.CreateTable(ctx, tm); err != nil {
			return err
		}
		if fill {
			if err := s.backfill(ctx, base, metas[i]); err != nil {
				return err
			}
		}
		s.mu.Lock()
		ex := s.extraLocked(base.Name)
		ex.idx.metas = append(slices.Clip(ex.idx.metas), metas[i])
		s.extras[tm.Name] = &tableExtra{created: s.clock.Now().UnixMicro(), idx: tableIndexes{baseOf: base.Name}}
		s.mu.Unlock()
	}
	return nil
}

func (s *Server) createIndex(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.CreateIndexRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	base, oe := s.meta(ctx, req.GetMainTableName())
	if oe != nil {
		return nil, oe
	}
	ex := s.extra(base.Name)
	if ex.idx.baseOf != "" {
		return nil, paramErr("Table: '%s' is an index table.", base.Name)
	}
	im, tm, oe := indexDef(base, ex.definedColumns, req.GetIndexMeta())
	if oe != nil {
		return nil, oe
	}
	// Hold the base's writes while its rows are copied.
	s.mu.Lock()
	mu := s.extraLocked(base.Name).idx.mu
	s.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if err := s.addIndexes(ctx, base, []*otsprotocol.IndexMeta{im}, []tablekit.TableMeta{tm}, req.GetIncludeBaseData()); err != nil {
		return nil, err
	}
	return &otsprotocol.CreateIndexResponse{}, nil
}

func (s *Server) dropIndexOp(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.DropIndexRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	base, oe := s.meta(ctx, req.GetMainTableName())
	if oe != nil {
		return nil, oe
	}
	name := req.GetIndexName()
	if !slices.ContainsFunc(s.extra(base.Name).idx.metas, func(im *otsprotocol.IndexMeta) bool { return im.GetName() == name }) {
		return nil, &otsError{status: 404, code: "OTSObjectNotExist", msg: "Requested index does not exist."}
	}
	if err := s.dropIndex(ctx, base.Name, name); err != nil {
		return nil, err
	}
	return &otsprotocol.DropIndexResponse{}, nil
}

// dropIndex deletes index name of table base.
func (s *Server) dropIndex(ctx context.Context, base, name string) error {
	if err := s.client.DeleteTable(ctx, name); err != nil && !errorsIsNotFound(err) {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.extras, name)
	if ex, ok := s.extras[base]; ok {
		ex.idx.metas = slices.DeleteFunc(slices.Clone(ex.idx.metas), func(im *otsprotocol.IndexMeta) bool { return im.GetName() == name })
	}
	return nil
}

func errorsIsNotFound(err error) bool { return toOTS(err) == errNoTable }

// extraLocked returns table's extra state, created if the table was made
// through a shared Backend, with its index lock. s.mu must be held.
func (s *Server) extraLocked(table string) *tableExtra {
	ex, ok := s.extras[table]
	if !ok {
		ex = &tableExtra{}
		s.extras[table] = ex
	}
	if ex.idx.mu == nil {
		ex.idx.mu = new(sync.Mutex)
	}
	return ex
}

// errIndexWrite refuses a write to an index table.
func errIndexWrite(table string) *otsError {
	return paramErr("Table: '%s' is an index table: it cannot be written directly.", table)
}
