package awsdynamodb

import (
	"context"
	"encoding/base64"
	"math"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// One-call writes.
//
// The optimistic path (occ) costs a GetItem and a conditional write. Two
// common shapes need no read, because one conditional DynamoDB call says
// all that the read would have been for:
//
//   - An UpdateRow whose changes are all Puts of distinct columns, on a
//     table that keeps one version (MaxVersions 1), with no condition or a
//     row-existence condition on a table without TTL, is one UpdateItem
//     that stores each put cell as an attribute of its own (an "overlay"
//     cell, named after its column) beside the packed .c/.b cells, which it
//     leaves alone. A read merges both; the newest version wins as ever. The
//     only stored cell it can remove is the column's earlier overlay cell,
//     which is hidden once the new one is written, so its condition is that
//     that cell is not newer than the new one, that the row was not written
//     under newer options (.g), and, under a TTL, that the item's expiry
//     .x is not later than the new cell's and that the row is not key-only
//     (.m; a key-only row's item never expires). It sets the revision
//     when the item has none (a new row) and adds one to .u, so that an
//     optimistic write that read the item before fails its condition.
//   - A PutRow or DeleteRow whose condition is a row existence and nothing
//     else, on a table without TTL (where a row exists iff its item does),
//     is one PutItem or DeleteItem conditioned on that existence and on the
//     row's generation.
//
// When the condition fails, or DynamoDB refuses the call as invalid (an
// item grown past 400 KB), the write goes the optimistic way, which reads
// the row and gives the exact answer: a failed condition, a stale-options
// refusal, the item limit, or success after all (a concurrent writer
// changed the row in between). No outcome differs from the optimistic
// path's; only the calls do.
//
// An optimistic write rewrites the item whole, which folds the overlay
// cells back into .c/.b; with MaxVersions 1 a row has at most one overlay
// cell per column, so overlays never pile up.

// maxFastChanges bounds the puts of a one-call update, so that its
// expressions stay far below DynamoDB's 4 KB per expression.
const maxFastChanges = 32

// maxFastSize bounds the bytes a one-call update adds (names and values);
// a larger one goes the optimistic way, which checks the item limit
// before writing.
const maxFastSize = 64 << 10

// signBit maps int64 order onto uint64 order.
const signBit = 1 << 63

// fastUpdate reports whether w is an update that fastWrite does in one
// UpdateItem.
func fastUpdate(w *tablekit.WriteRequest) bool {
	if w.Kind != tablekit.WriteUpdate || w.Meta.Options.MaxVersions != 1 || len(w.Changes) > maxFastChanges || !fastCondition(w) {
		return false
	}
	size := 0
	for i, ch := range w.Changes {
		if ch.Kind != tablekit.ChangePut || ch.Version == math.MaxInt64 {
			return false
		}
		for _, prev := range w.Changes[:i] {
			if prev.Column == ch.Column {
				return false
			}
		}
		size += len(ch.Column) + ch.Value.Size()
	}
	return size <= maxFastSize
}

// fastCondition reports whether what w must read first (rowmodel.WriteReads)
// can be one DynamoDB condition: nothing, or (without TTL, where an item
// exists iff its row does) the row's existence.
func fastCondition(w *tablekit.WriteRequest) bool {
	switch rowmodel.WriteReads(w) {
	case rowmodel.ReadsNothing:
		return true
	case rowmodel.ReadsExistence:
		return w.Meta.Options.TTL == tablekit.NoExpiry
	}
	return false
}

// fastPutOrDelete reports whether w is a put or delete that reads the
// row's existence and nothing else (rowmodel.WriteReads), which fastWrite
// does in one call on a table without TTL (the ones that read nothing are
// direct).
func fastPutOrDelete(w *tablekit.WriteRequest) bool {
	return (w.Kind == tablekit.WritePut || w.Kind == tablekit.WriteDelete) && rowmodel.WriteReads(w) == rowmodel.ReadsExistence && w.Meta.Options.TTL == tablekit.NoExpiry
}

// expr collects a request's expression names and values.
type expr struct {
	names map[string]string
	vals  map[string]types.AttributeValue
	conds []string
}

func newExpr() *expr {
	return &expr{names: map[string]string{}, vals: map[string]types.AttributeValue{}}
}

// common adds the conditions every one-call write has: the row's
// existence when w asks for it, and a generation no newer than w's.
func (e *expr) common(w *tablekit.WriteRequest) {
	switch w.Condition.Row {
	case tablekit.ExpectExist:
		e.names["#k"] = attrKey
		e.conds = append(e.conds, "attribute_exists(#k)")
	case tablekit.ExpectNotExist:
		e.names["#k"] = attrKey
		e.conds = append(e.conds, "attribute_not_exists(#k)")
	}
	// "NOT a > b" holds when a is absent, as "a <= b" does not; it is one
	// term, where "attribute_not_exists(a) OR a <= b" is three (dynalite
	// evaluates each at a cost: a one-call update with the longer form
	// took 1.9 times the raw UpdateItem, with this one about 1.2).
	e.names["#g"] = attrGen
	e.vals[":g"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(w.Meta.Generation, 10)}
	e.conds = append(e.conds, "NOT #g > :g")
}

func (e *expr) condition() *string { return aws.String(strings.Join(e.conds, " AND ")) }

func (e *expr) values() map[string]types.AttributeValue {
	if len(e.vals) == 0 {
		return nil
	}
	return e.vals
}

// fastWrite applies w (fastUpdate or fastPutOrDelete) in one conditional
// call. done is false when the condition failed or the call was refused as
// invalid: the caller then takes the optimistic path.
func (b *Backend) fastWrite(ctx context.Context, w *tablekit.WriteRequest, t target) (res *tablekit.UpdateResult, done bool, sent sentWrite, err error) {
	e := newExpr()
	e.common(w)
	native := aws.String(t.ti.native)
	switch w.Kind {
	case tablekit.WriteUpdate:
		in := b.overlayUpdate(e, w, t)
		in.TableName = native
		_, err = b.client.UpdateItem(ctx, in)
		res = &tablekit.UpdateResult{}
		// The revision lands only on an item that had none (a new row).
		sent = sentWrite{revision: e.vals[":r"].(*types.AttributeValueMemberS).Value, res: res}
	case tablekit.WritePut:
		var wr types.WriteRequest
		if wr, err = directRequest(w, t); err != nil {
			return nil, true, sentWrite{}, err
		}
		sent = sentWrite{revision: revisionOf(wr.PutRequest.Item)}
		_, err = b.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: native, Item: wr.PutRequest.Item,
			ConditionExpression: e.condition(), ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values(),
		})
	default:
		_, err = b.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: native, Key: keyAttrs(t.shard, t.sk),
			ConditionExpression: e.condition(), ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values(),
		})
	}
	switch {
	case err == nil:
		return res, true, sentWrite{}, nil
	case isCode(err, "ConditionalCheckFailedException", "ValidationException") && ctx.Err() == nil:
		return nil, false, sent, nil
	}
	return nil, true, sentWrite{}, b.tableErr(ctx, err, w.Meta.Name, "conditional write")
}

// overlayUpdate builds the UpdateItem of a fastUpdate write (see One-call
// writes above), its TableName unset.
func (b *Backend) overlayUpdate(e *expr, w *tablekit.WriteRequest, t target) *dynamodb.UpdateItemInput {
	e.names["#r"], e.names["#u"] = attrRevision, attrUpdates
	e.vals[":r"] = &types.AttributeValueMemberS{Value: newRevision(0, false)}
	e.vals[":one"] = &types.AttributeValueMemberN{Value: "1"}
	sets := []string{"#r = if_not_exists(#r, :r)"}
	bounds := map[int64]string{} // version → the name of its bound value
	var maxVs int64 = math.MinInt64
	for i, ch := range w.Changes {
		n, v := "#a"+strconv.Itoa(i), ":v"+strconv.Itoa(i)
		e.names[n] = ch.Column
		e.vals[v] = overlayValue(ch.Version, ch.Value)
		sets = append(sets, n+" = "+v)
		bound, ok := bounds[ch.Version]
		if !ok {
			// The least value above every overlay cell of a version ≤ this one.
			bound = ":b" + strconv.Itoa(len(bounds))
			bounds[ch.Version] = bound
			e.vals[bound] = &types.AttributeValueMemberS{Value: overlayHex(uint64(ch.Version+1) ^ signBit)}
		}
		e.conds = append(e.conds, "NOT "+n+" >= "+bound)
		maxVs = max(maxVs, rowmodel.Seconds(ch.Version))
	}
	if storesGeneration(w.Meta, w.Meta.Generation) {
		sets = append(sets, "#g = :g")
	}
	if stamp := writeStamp(t, w); stamp != "" {
		e.names["#w"] = attrWrite
		e.vals[":w"] = &types.AttributeValueMemberS{Value: stamp}
		sets = append(sets, "#w = :w")
	}
	if opts := w.Meta.Options; opts.TTL != tablekit.NoExpiry {
		e.names["#x"], e.names["#m"] = attrExpiry, attrMarker
		e.vals[":x"] = &types.AttributeValueMemberN{Value: expiryAttr(maxVs, opts.TTLSeconds())}
		sets = append(sets, "#x = :x")
		e.conds = append(e.conds, "attribute_not_exists(#m)", "NOT #x > :x")
	}
	return &dynamodb.UpdateItemInput{
		Key:                       keyAttrs(t.shard, t.sk),
		UpdateExpression:          aws.String("SET " + strings.Join(sets, ", ") + " ADD #u :one"),
		ConditionExpression:       e.condition(),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.vals,
	}
}

// An overlay cell is an attribute named after its column holding one
// version: an S of 16 lower-case hex digits of the version (sign bit
// flipped, so that string order is version order), a type letter and the
// payload: as in .c (S the string, I decimal, D shortest 'g', B t/f), or X
// and the unpadded standard base64 of a Binary value. Every overlay cell
// is an S that sorts by version first, so the one-call update's condition
// is one comparison per column.

// overlayHex formats a flipped version as 16 lower-case hex digits.
func overlayHex(u uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = digits[u&15]
		u >>= 4
	}
	return string(b[:])
}

// overlayValue encodes a cell of version v and value val as an overlay attribute.
func overlayValue(v int64, val tablekit.Value) types.AttributeValue {
	var sb strings.Builder
	sb.Grow(17 + val.Size()*4/3 + 24)
	sb.WriteString(overlayHex(uint64(v) ^ signBit))
	var scratch [32]byte
	switch val.Type() {
	case tablekit.TypeInteger:
		i, _ := val.Int()
		sb.WriteByte('I')
		sb.Write(strconv.AppendInt(scratch[:0], i, 10))
	case tablekit.TypeDouble:
		f, _ := val.Float()
		sb.WriteByte('D')
		sb.Write(strconv.AppendFloat(scratch[:0], f, 'g', -1, 64))
	case tablekit.TypeBoolean:
		sb.WriteByte('B')
		if b, _ := val.Bool(); b {
			sb.WriteByte('t')
		} else {
			sb.WriteByte('f')
		}
	case tablekit.TypeBinary:
		b, _ := val.BytesString()
		sb.WriteByte('X')
		sb.WriteString(base64.RawStdEncoding.EncodeToString([]byte(b)))
	default:
		s, _ := val.Str()
		sb.WriteByte('S')
		sb.WriteString(s)
	}
	return &types.AttributeValueMemberS{Value: sb.String()}
}

// decodeOverlay decodes the overlay attribute of column name.
func decodeOverlay(name string, av types.AttributeValue) (tablekit.Column, error) {
	a, ok := av.(*types.AttributeValueMemberS)
	if !ok || !validColumnName(name) || len(a.Value) < 17 {
		return tablekit.Column{}, errCorrupt
	}
	s := a.Value
	u, err := strconv.ParseUint(s[:16], 16, 64)
	if err != nil {
		return tablekit.Column{}, errCorrupt
	}
	c := tablekit.Column{Name: name, Version: int64(u ^ signBit)}
	if s[16] == 'X' {
		b, err := base64.RawStdEncoding.DecodeString(s[17:])
		if err != nil {
			return c, errCorrupt
		}
		c.Value = tablekit.Binary(b)
		return c, nil
	}
	c.Value, err = parseTextValue(s[16], s[17:])
	return c, err
}

// validColumnName reports whether name is a portable column name.
func validColumnName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return false
		}
	}
	return true
}

// mergeOverlays adds overlay cells to a row's packed cells (in stored
// order), an overlay cell replacing a packed one of the same column and
// version (it was written later: every packed write drops the overlays),
// and returns the cells in stored order.
func mergeOverlays(cells, overlays []tablekit.Column) []tablekit.Column {
	n := len(cells)
	for _, o := range overlays {
		replaced := false
		for i := range cells[:n] {
			if cells[i].Name == o.Name && cells[i].Version == o.Version {
				cells[i].Value, replaced = o.Value, true
				break
			}
		}
		if !replaced {
			cells = append(cells, o)
		}
	}
	if len(cells) > n {
		rowmodel.SortCells(cells)
	}
	return cells
}
