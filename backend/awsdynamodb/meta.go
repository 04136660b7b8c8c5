package awsdynamodb

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// The metadata table and the calls on whole tables (CreateTable,
// DescribeTable, ListTables, UpdateTable, DeleteTable); the rows' calls are
// in read.go and write.go.

// Metadata items: one per table in the metadata table, keyed by the
// portable name.
const (
	metaName        = "name"
	metaNative      = "native"
	metaKey         = "key"
	metaTTL         = "ttl"
	metaMaxVer      = "maxVersions"
	metaMaxOffset   = "maxVersionOffset"
	metaShards      = "shards" // N: the shard count of a table without placement
	metaNativeTTL   = "nativeTTL"
	metaIncarnation = "incarnation" // absent on tables made before incarnations
	metaGeneration  = "generation"  // absent on tables made before generations
	metaPlacement   = "placement"   // N: the shard placement (item.go); absent is placementFNV

	// metaPlacedShards is the shard count of a table with a placement
	// attribute, which has no metaShards: an adapter from before
	// placements, which ignores the placement and would look for rows in
	// the FNV shards, finds the item malformed and refuses the table.
	metaPlacedShards = "placedShards"

	// metaAutoIncrement, in a key column's map: BOOL true on the table's
	// auto-increment column (SPEC §14), absent on every other.
	metaAutoIncrement = "autoIncrement"
)

func num(i int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(i, 10)}
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func metaItem(m *tablekit.TableMeta, ti *tableInfo) map[string]types.AttributeValue {
	key := make([]types.AttributeValue, len(m.Key))
	for i, kc := range m.Key {
		col := map[string]types.AttributeValue{
			"name": str(kc.Name),
			"type": str(kc.Type.String()),
		}
		if kc.AutoIncrement {
			col[metaAutoIncrement] = &types.AttributeValueMemberBOOL{Value: true}
		}
		key[i] = &types.AttributeValueMemberM{Value: col}
	}
	item := map[string]types.AttributeValue{
		metaName:       str(m.Name),
		metaNative:     str(ti.native),
		metaKey:        &types.AttributeValueMemberL{Value: key},
		metaTTL:        num(m.Options.TTLSeconds()),
		metaMaxVer:     num(int64(m.Options.MaxVersions)),
		metaMaxOffset:  num(m.Options.MaxVersionOffsetSeconds()),
		metaNativeTTL:  &types.AttributeValueMemberBOOL{Value: ti.nativeTTL},
		metaGeneration: num(m.Generation),
	}
	if m.Incarnation != "" {
		item[metaIncarnation] = str(m.Incarnation)
	}
	if ti.placement == placementFNV {
		item[metaShards] = num(int64(ti.shards))
	} else {
		item[metaPlacement] = num(int64(ti.placement))
		item[metaPlacedShards] = num(int64(ti.shards))
	}
	return item
}

func parseMeta(item map[string]types.AttributeValue) (*tablekit.TableMeta, *tableInfo, error) {
	bad := func(what string) error {
		return tablekit.Errorf(tablekit.ErrUnavailable, "metadata item is malformed: %s", what)
	}
	str := func(k string) (string, bool) {
		s, ok := item[k].(*types.AttributeValueMemberS)
		if !ok {
			return "", false
		}
		return s.Value, true
	}
	n := func(k string) (int64, bool) {
		s, ok := item[k].(*types.AttributeValueMemberN)
		if !ok {
			return 0, false
		}
		i, err := strconv.ParseInt(s.Value, 10, 64)
		return i, err == nil
	}
	var m tablekit.TableMeta
	var ti tableInfo
	var ok bool
	if m.Name, ok = str(metaName); !ok {
		return nil, nil, bad("name")
	}
	if ti.native, ok = str(metaNative); !ok {
		return nil, nil, bad("native")
	}
	l, ok := item[metaKey].(*types.AttributeValueMemberL)
	if !ok {
		return nil, nil, bad("key")
	}
	for _, e := range l.Value {
		mm, ok := e.(*types.AttributeValueMemberM)
		if !ok {
			return nil, nil, bad("key column")
		}
		name, ok1 := mm.Value["name"].(*types.AttributeValueMemberS)
		typ, ok2 := mm.Value["type"].(*types.AttributeValueMemberS)
		if !ok1 || !ok2 {
			return nil, nil, bad("key column")
		}
		kc := tablekit.KeyColumn{Name: name.Value}
		if ai, ok := mm.Value[metaAutoIncrement].(*types.AttributeValueMemberBOOL); ok {
			kc.AutoIncrement = ai.Value
		}
		for _, t := range []tablekit.Type{tablekit.TypeString, tablekit.TypeInteger, tablekit.TypeBinary} {
			if t.String() == typ.Value {
				kc.Type = t
			}
		}
		if kc.Type == 0 {
			return nil, nil, bad("key column type " + typ.Value)
		}
		m.Key = append(m.Key, kc)
	}
	ttl, ok1 := n(metaTTL)
	mv, ok2 := n(metaMaxVer)
	off, ok3 := n(metaMaxOffset)
	if _, present := item[metaPlacement]; present {
		// A placement this code does not know (a newer adapter's) would
		// look for rows in the wrong shards: refuse the table instead.
		p, ok := n(metaPlacement)
		if !ok || p <= int64(placementFNV) || p > int64(placementSpread) {
			return nil, nil, bad("placement " + placementText(item[metaPlacement]) + " is not one this adapter knows (1)")
		}
		ti.placement = placement(p)
	}
	shardsAttr := metaShards
	if ti.placement != placementFNV {
		shardsAttr = metaPlacedShards
	}
	shards, ok4 := n(shardsAttr)
	if !ok1 || !ok2 || !ok3 || !ok4 || shards < 1 || shards > MaxShards {
		return nil, nil, bad("options")
	}
	m.Options = tablekit.TableOptions{TTL: time.Duration(ttl) * time.Second, MaxVersions: int(mv), MaxVersionOffset: time.Duration(off) * time.Second}
	ti.shards = int(shards)
	if bv, ok := item[metaNativeTTL].(*types.AttributeValueMemberBOOL); ok {
		ti.nativeTTL = bv.Value
	}
	if _, present := item[metaIncarnation]; present {
		if m.Incarnation, ok = str(metaIncarnation); !ok {
			return nil, nil, bad("incarnation")
		}
	}
	if _, present := item[metaGeneration]; present {
		if m.Generation, ok = n(metaGeneration); !ok {
			return nil, nil, bad("generation")
		}
	}
	if bv, ok := item[metaFeed].(*types.AttributeValueMemberBOOL); ok {
		ti.feed = bv.Value
	}
	ti.incarnation = m.Incarnation
	return &m, &ti, nil
}

// placementText quotes a metadata item's placement attribute for an error.
func placementText(v types.AttributeValue) string {
	if nv, ok := v.(*types.AttributeValueMemberN); ok {
		return strconv.Quote(nv.Value)
	}
	return "(not a number)"
}

// legacyPlacement, set by tests (SetLegacyPlacement), makes CreateTable
// place a table's rows as the adapter did before placements were
// recorded, with no placement attribute in its metadata.
var legacyPlacement atomic.Bool

// newPlacement is the placement CreateTable gives a new table.
func newPlacement() placement {
	if legacyPlacement.Load() {
		return placementFNV
	}
	return currentPlacement
}

// incarnationCond is the condition that a metadata item has incarnation
// inc (no incarnation attribute when inc is empty), with the names and
// values it uses added to names and vals.
func incarnationCond(inc string, names map[string]string, vals map[string]types.AttributeValue) string {
	names["#i"] = metaIncarnation
	if inc == "" {
		return "attribute_not_exists(#i)"
	}
	vals[":i"] = str(inc)
	return "#i = :i"
}

// generationCond is the condition that a metadata item has generation gen
// (0 also matches an item from before generations, which has none).
func generationCond(gen int64, names map[string]string, vals map[string]types.AttributeValue) string {
	names["#g"] = metaGeneration
	vals[":g"] = num(gen)
	if gen == 0 {
		return "(attribute_not_exists(#g) OR #g = :g)"
	}
	return "#g = :g"
}

// maxIncarnationLen bounds the incarnation a table's native name carries
// (the Client makes 16 hex digits).
const maxIncarnationLen = 32

// CreateTable implements tablekit.Backend. It claims the name in the
// metadata table first (a conditional put: the one point where two
// concurrent creators are ordered), then creates the DynamoDB table, named
// after meta's Incarnation, waits for it to be ACTIVE and enables native
// TTL on the expiry attribute where the server supports it.
func (b *Backend) CreateTable(ctx context.Context, meta *tablekit.TableMeta) error {
	return b.createTable(ctx, meta, false)
}

// createTable is CreateTable, and with feed CreateTableWithFeed: the
// metadata item is claimed with its feed attribute set and the DynamoDB
// table created with its stream on, so no write precedes the feed.
func (b *Backend) createTable(ctx context.Context, meta *tablekit.TableMeta, feed bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if inc := meta.Incarnation; len(inc) > maxIncarnationLen || strings.ContainsFunc(inc, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		return tablekit.Errorf(tablekit.ErrInvalidArgument, "incarnation %q: at most %d letters and digits", inc, maxIncarnationLen)
	}
	shards := b.opts.shards
	if b.opts.shardsFor != nil {
		if n := b.opts.shardsFor(meta.Name); n != 0 {
			shards = n
		}
	}
	if shards < 1 || shards > MaxShards {
		return tablekit.Errorf(tablekit.ErrInvalidArgument, "%d shards; it must be 1-%d", shards, MaxShards)
	}
	ti := &tableInfo{incarnation: meta.Incarnation, native: nativeName(b.opts.prefix, meta.Name, meta.Incarnation), shards: shards, placement: newPlacement(), feed: feed}
	item := metaItem(meta, ti)
	if feed {
		item[metaFeed] = &types.AttributeValueMemberBOOL{Value: true}
	}
	claim := &dynamodb.PutItemInput{
		TableName:                aws.String(b.meta),
		Item:                     item,
		ConditionExpression:      aws.String("attribute_not_exists(#n)"),
		ExpressionAttributeNames: map[string]string{"#n": metaName},
	}
	_, err := b.client.PutItem(ctx, claim)
	if isCode(err, "ResourceNotFoundException") {
		if err := b.createMetaTable(ctx); err != nil {
			return err
		}
		_, err = b.client.PutItem(ctx, claim)
	}
	if isCode(err, "ConditionalCheckFailedException") {
		return tablekit.WrapError(tablekit.ErrAlreadyExists, err, "the table already exists")
	}
	if err != nil {
		return mapErr(ctx, err, "PutItem on metadata table %q", b.meta)
	}
	if err := b.createNative(ctx, ti, feed); err != nil {
		// Release the claim; the name stays free for another try. Use a
		// context that outlives a canceled ctx.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		names := map[string]string{}
		vals := map[string]types.AttributeValue{}
		cond := incarnationCond(meta.Incarnation, names, vals)
		if len(vals) == 0 {
			vals = nil
		}
		b.client.DeleteItem(cctx, &dynamodb.DeleteItemInput{
			TableName:                 aws.String(b.meta),
			Key:                       map[string]types.AttributeValue{metaName: str(meta.Name)},
			ConditionExpression:       aws.String(cond),
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: vals,
		})
		return err
	}
	// Native TTL: reclaim space of rows whose cells have all expired. Not
	// every server has it; record what happened.
	_, err = b.client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(ti.native),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(attrExpiry), Enabled: aws.Bool(true),
		},
	})
	switch {
	case err == nil:
		ti.nativeTTL = true
	case isCode(err, "UnknownOperationException"):
		// unsupported (dynalite): reads hide expired cells anyway.
	default:
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		// Not fatal: expiry is enforced on read; record that it is off.
	}
	if ti.nativeTTL {
		// Record it, unless an UpdateTable changed the options meanwhile
		// (it saw nativeTTL false and so did not turn native TTL off, and
		// it moved the generation on): then turn it off again.
		names := map[string]string{"#x": metaNativeTTL}
		vals := map[string]types.AttributeValue{":x": &types.AttributeValueMemberBOOL{Value: true}}
		cond := incarnationCond(meta.Incarnation, names, vals) + " AND " + generationCond(meta.Generation, names, vals)
		_, err = b.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(b.meta),
			Key:                       map[string]types.AttributeValue{metaName: str(meta.Name)},
			UpdateExpression:          aws.String("SET #x = :x"),
			ConditionExpression:       aws.String(cond),
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: vals,
		})
		if isCode(err, "ConditionalCheckFailedException") {
			ti.nativeTTL = false
			err = b.disableNativeTTL(ctx, ti.native)
		}
		if err != nil {
			return mapErr(ctx, err, "UpdateItem on metadata table %q", b.meta)
		}
	}
	b.remember(meta.Name, ti)
	return nil
}

// createNative creates the rows' DynamoDB table and waits until it is ACTIVE.
// It never deletes a table: a DynamoDB table of that name that is being
// deleted is waited for, but one that exists (a user's own table of that
// name, or one left by a DeleteTable that removed the metadata item and was
// interrupted before the DynamoDB table went) is reported as
// ErrAlreadyExists naming it. Nothing proves such a table is tablekit's,
// so deciding its fate is left to a person. The exception: a table of
// this creation's own name (its incarnation is in the name) with the
// rows' key schema is this call's, made by a CreateTable whose answer was
// lost and found by the SDK's retry.
func (b *Backend) createNative(ctx context.Context, ti *tableInfo, feed bool) error {
	in := &dynamodb.CreateTableInput{
		TableName: aws.String(ti.native),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(attrShard), AttributeType: types.ScalarAttributeTypeN},
			{AttributeName: aws.String(attrKey), AttributeType: types.ScalarAttributeTypeB},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(attrShard), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(attrKey), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	}
	if feed {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}
	}
	for attempt := 0; ; attempt++ {
		_, err := b.client.CreateTable(ctx, in)
		if err == nil {
			return b.waitTable(ctx, ti.native, true)
		}
		if !isCode(err, "ResourceInUseException") {
			return mapErr(ctx, err, "CreateTable %q", ti.native)
		}
		// A table of this name exists or is being deleted.
		out, derr := b.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(ti.native)})
		switch {
		case derr != nil && !isCode(derr, "ResourceNotFoundException"):
			return mapErr(ctx, derr, "DescribeTable %q", ti.native)
		case derr == nil && ti.incarnation != "" && out.Table != nil && out.Table.TableStatus != types.TableStatusDeleting &&
			slices.EqualFunc(out.Table.KeySchema, in.KeySchema, func(a, b types.KeySchemaElement) bool {
				return aws.ToString(a.AttributeName) == aws.ToString(b.AttributeName) && a.KeyType == b.KeyType
			}):
			// The name holds this creation's incarnation (random, and
			// claimed in the metadata above): the table is the one this
			// call made, whose answer was lost and the SDK's retry found.
			return b.waitTable(ctx, ti.native, true)
		case derr == nil && (out.Table == nil || out.Table.TableStatus != types.TableStatusDeleting):
			return tablekit.WrapError(tablekit.ErrAlreadyExists, err,
				"DynamoDB table %q exists but has no tablekit metadata (not created by tablekit, or left by an interrupted DeleteTable); tablekit never deletes it: delete it yourself (aws dynamodb delete-table --table-name %s) or choose another name or table prefix",
				ti.native, ti.native)
		case attempt >= 3:
			return mapErr(ctx, err, "CreateTable %q", ti.native)
		}
		// Being deleted, or gone since: wait until it is gone, then try again.
		if err := b.waitTable(ctx, ti.native, false); err != nil {
			return err
		}
	}
}

func (b *Backend) createMetaTable(ctx context.Context) error {
	_, err := b.client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(b.meta),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(metaName), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(metaName), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil && !isCode(err, "ResourceInUseException") {
		return mapErr(ctx, err, "CreateTable %q (metadata)", b.meta)
	}
	return b.waitTable(ctx, b.meta, true)
}

// waitTable polls DescribeTable until the table is ACTIVE (active true) or
// gone (active false). It polls quickly at first: emulators are instant.
func (b *Backend) waitTable(ctx context.Context, native string, active bool) error {
	delay := 10 * time.Millisecond
	for {
		out, err := b.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(native)})
		switch {
		case err == nil && active && out.Table != nil && out.Table.TableStatus == types.TableStatusActive:
			return nil
		case err != nil && isCode(err, "ResourceNotFoundException"):
			if !active {
				return nil
			}
		case err != nil:
			return mapErr(ctx, err, "DescribeTable %q", native)
		}
		if err := driver.Sleep(ctx, delay); err != nil {
			return err
		}
		delay = min(delay*2, time.Second)
	}
}

func (b *Backend) remember(name string, ti *tableInfo) {
	b.mu.Lock()
	b.tables[name] = ti
	b.mu.Unlock()
}

func (b *Backend) forget(name string) {
	b.mu.Lock()
	delete(b.tables, name)
	b.mu.Unlock()
}

// info returns the adapter's facts about the incarnation of the table meta
// describes. They are cached: an incarnation's native name and shard count
// never change. When the metadata item holds another incarnation (the
// table was deleted and created again since the Client read meta), the
// table meta describes does not exist: ErrTableNotFound, on which the
// Client reads the metadata again and retries.
func (b *Backend) info(ctx context.Context, meta *tablekit.TableMeta) (*tableInfo, error) {
	b.mu.Lock()
	ti, ok := b.tables[meta.Name]
	b.mu.Unlock()
	if ok && ti.incarnation == meta.Incarnation {
		return ti, nil
	}
	_, ti, err := b.describe(ctx, meta.Name)
	if err != nil {
		return nil, err
	}
	if ti.incarnation != meta.Incarnation {
		// As the DynamoDB table of meta's incarnation would answer.
		return nil, inTable(tablekit.Errorf(tablekit.ErrTableNotFound, "the table was deleted and created again since the request's metadata was read"), meta.Name)
	}
	return ti, nil
}

// describe reads a table's metadata item.
func (b *Backend) describe(ctx context.Context, table string) (*tablekit.TableMeta, *tableInfo, error) {
	out, err := b.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(b.meta),
		Key:            map[string]types.AttributeValue{metaName: str(table)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		if isCode(err, "ResourceNotFoundException") {
			return nil, nil, inTable(tablekit.WrapError(tablekit.ErrTableNotFound, err, "the table does not exist"), table)
		}
		return nil, nil, mapErr(ctx, err, "GetItem on metadata table %q", b.meta)
	}
	if len(out.Item) == 0 {
		b.forget(table)
		return nil, nil, inTable(tablekit.Errorf(tablekit.ErrTableNotFound, "the table does not exist"), table)
	}
	m, ti, err := parseMeta(out.Item)
	if err != nil {
		if e, ok := err.(*tablekit.Error); ok {
			err = inTable(e, table) // a malformed item names its table
		}
		return nil, nil, err
	}
	b.remember(table, ti)
	return m, ti, nil
}

// DescribeTable implements tablekit.Backend: the metadata item, with the
// table's Incarnation and Generation.
func (b *Backend) DescribeTable(ctx context.Context, table string) (*tablekit.TableMeta, error) {
	m, _, err := b.describe(ctx, table)
	return m, err
}

// ListTables implements tablekit.Backend: the portable names recorded in
// the metadata table.
func (b *Backend) ListTables(ctx context.Context) ([]string, error) {
	var names []string
	p := dynamodb.NewScanPaginator(b.client, &dynamodb.ScanInput{
		TableName:                aws.String(b.meta),
		ConsistentRead:           aws.Bool(true),
		ProjectionExpression:     aws.String("#n"),
		ExpressionAttributeNames: map[string]string{"#n": metaName},
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			if isCode(err, "ResourceNotFoundException") {
				return []string{}, nil
			}
			return nil, mapErr(ctx, err, "Scan on metadata table %q", b.meta)
		}
		for _, it := range out.Items {
			if s, ok := it[metaName].(*types.AttributeValueMemberS); ok {
				names = append(names, s.Value)
			}
		}
	}
	slices.Sort(names)
	if names == nil {
		names = []string{}
	}
	return names, nil
}

// maxUpdateAttempts bounds UpdateTable's retries when only the native TTL
// state of the metadata item changed under it.
const maxUpdateAttempts = 20

// UpdateTable implements tablekit.Backend: a conditional write of the
// metadata item, applied only while it still holds req.Meta's Incarnation
// (else ErrTableNotFound) and Generation (else ErrConditionFailed), which
// stores the options and Generation+1. MaxVersions and TTL are enforced by
// the adapter on every read and write, so nothing native changes, with one
// exception: an update that raises TTL (or sets NoExpiry) on a table whose
// native TTL is on turns native TTL off first, for good, and records that.
// Items carry an expiry (.x) computed with the TTL in force when they were
// written; DynamoDB would delete them then, although under the raised TTL
// they are still visible. The write is also conditioned on the nativeTTL
// read, so that CreateTable recording it meanwhile is noticed.
func (b *Backend) UpdateTable(ctx context.Context, req *tablekit.UpdateTableRequest) (*tablekit.TableMeta, error) {
	want := req.Meta
	for attempt := 0; ; attempt++ {
		cur, ti, err := b.describe(ctx, want.Name)
		switch {
		case err != nil:
			return nil, err
		case cur.Incarnation != want.Incarnation:
			return nil, inTable(tablekit.Errorf(tablekit.ErrTableNotFound, "the table was deleted and created again since its metadata was read"), want.Name)
		case cur.Generation != want.Generation:
			return nil, tablekit.Errorf(tablekit.ErrConditionFailed, "the options changed since they were read (generation %d, expected %d)", cur.Generation, want.Generation)
		}
		nativeTTL := ti.nativeTTL
		if nativeTTL && raisesTTL(cur.Options.TTL, req.Options.TTL) {
			if err := b.disableNativeTTL(ctx, ti.native); err != nil {
				return nil, mapErr(ctx, err, "raising the TTL needs native TTL off, and UpdateTimeToLive on %q failed", ti.native)
			}
			nativeTTL = false
		}
		names := map[string]string{"#n": metaName, "#t": metaTTL, "#v": metaMaxVer, "#o": metaMaxOffset, "#x": metaNativeTTL}
		vals := map[string]types.AttributeValue{
			":t": num(req.Options.TTLSeconds()), ":v": num(int64(req.Options.MaxVersions)), ":o": num(req.Options.MaxVersionOffsetSeconds()),
			":x": &types.AttributeValueMemberBOOL{Value: nativeTTL}, ":ox": &types.AttributeValueMemberBOOL{Value: ti.nativeTTL},
			":ng": num(want.Generation + 1),
		}
		cond := "attribute_exists(#n) AND " + incarnationCond(want.Incarnation, names, vals) + " AND " +
			generationCond(want.Generation, names, vals) + " AND #x = :ox"
		_, err = b.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(b.meta),
			Key:                       map[string]types.AttributeValue{metaName: str(want.Name)},
			ConditionExpression:       aws.String(cond),
			UpdateExpression:          aws.String("SET #t = :t, #v = :v, #o = :o, #x = :x, #g = :ng"),
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: vals,
		})
		switch {
		case err == nil:
			nti := *ti
			nti.nativeTTL = nativeTTL
			b.remember(want.Name, &nti)
			m := *cur
			m.Options = req.Options
			m.Generation = want.Generation + 1
			return &m, nil
		case isCode(err, "ResourceNotFoundException"):
			return nil, inTable(tablekit.WrapError(tablekit.ErrTableNotFound, err, "the table does not exist"), want.Name)
		case !isCode(err, "ConditionalCheckFailedException"):
			return nil, mapErr(ctx, err, "UpdateItem on metadata table %q", b.meta)
		case attempt >= maxUpdateAttempts:
			return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "the metadata kept changing under UpdateTable")
		}
		// Deleted, updated by someone else, or nativeTTL recorded since
		// describe: read again, which tells which.
		if err := (driver.Backoff{Base: 10 * time.Millisecond}).Wait(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// raisesTTL reports whether changing a table's TTL from old to new keeps
// some cell visible longer than before.
func raisesTTL(old, new time.Duration) bool {
	if old == tablekit.NoExpiry {
		return false
	}
	return new == tablekit.NoExpiry || new > old
}

// disableNativeTTL turns DynamoDB's TTL off on a table. Already off (or
// turning off) is success.
func (b *Backend) disableNativeTTL(ctx context.Context, native string) error {
	_, err := b.client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(native),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(attrExpiry), Enabled: aws.Bool(false),
		},
	})
	if err == nil {
		return nil
	}
	out, derr := b.client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(native)})
	if derr == nil && out.TimeToLiveDescription != nil {
		switch out.TimeToLiveDescription.TimeToLiveStatus {
		case types.TimeToLiveStatusDisabled, types.TimeToLiveStatusDisabling:
			return nil
		}
	}
	return err
}

// DeleteTable implements tablekit.Backend: it removes the metadata item
// (the point at which the table stops existing) and then the DynamoDB table
// the item names.
func (b *Backend) DeleteTable(ctx context.Context, table string) error {
	out, err := b.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                aws.String(b.meta),
		Key:                      map[string]types.AttributeValue{metaName: str(table)},
		ConditionExpression:      aws.String("attribute_exists(#n)"),
		ExpressionAttributeNames: map[string]string{"#n": metaName},
		ReturnValues:             types.ReturnValueAllOld,
	})
	b.forget(table)
	if isCode(err, "ConditionalCheckFailedException", "ResourceNotFoundException") {
		return inTable(tablekit.WrapError(tablekit.ErrTableNotFound, err, "the table does not exist"), table)
	}
	if err != nil {
		return mapErr(ctx, err, "DeleteItem on metadata table %q", b.meta)
	}
	native, ok := out.Attributes[metaNative].(*types.AttributeValueMemberS)
	if !ok {
		return nil // gone; a malformed item names no DynamoDB table to delete
	}
	_, err = b.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(native.Value)})
	if err != nil && !isCode(err, "ResourceNotFoundException") {
		return mapErr(ctx, err, "DeleteTable %q", native.Value)
	}
	return nil
}

// tableErr maps an error of a data call on a table's DynamoDB table. A
// missing DynamoDB table is ErrTableNotFound: the table was deleted, or
// deleted and created again under another incarnation (the Client then
// reads the metadata again and retries).
func (b *Backend) tableErr(ctx context.Context, err error, table, call string) error {
	if err == nil {
		return nil
	}
	if isCode(err, "ResourceNotFoundException") {
		b.forget(table)
		return tablekit.WrapError(tablekit.ErrTableNotFound, err, "%s: the table's DynamoDB table does not exist", call)
	}
	return mapErr(ctx, err, "%s", call)
}
