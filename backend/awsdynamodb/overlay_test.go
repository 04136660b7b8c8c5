package awsdynamodb

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
)

// An overlay cell decodes to what was encoded, and sorts by version first:
// the one-call update's condition "NOT cell >= bound(v)" must hold exactly
// for cells of a version ≤ v.
func TestOverlayEncoding(t *testing.T) {
	values := []tablekit.Value{
		tablekit.String(""), tablekit.String("héllo~@S"), tablekit.Integer(math.MinInt64), tablekit.Integer(-1),
		tablekit.Double(math.Copysign(0, -1)), tablekit.Double(1e300), tablekit.Boolean(true), tablekit.Boolean(false),
		tablekit.Binary(nil), tablekit.Binary([]byte{0xff, 0xff, 0xff}),
	}
	versions := []int64{math.MinInt64, -1000, -1, 0, 1, 999, 1_700_000_000_000, math.MaxInt64 - 1}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		versions = append(versions, r.Int64()-r.Int64())
	}
	for _, v := range versions {
		for _, val := range values {
			av := overlayValue(v, val)
			c, err := decodeOverlay("col_1", av)
			if err != nil || c.Name != "col_1" || c.Version != v || !c.Value.Equal(val) || c.Value.Type() != val.Type() {
				t.Fatalf("overlay of %v at %d decodes as %+v, %v", val, v, c, err)
			}
			for _, w := range versions {
				if w == math.MaxInt64 {
					continue
				}
				below := av.(*types.AttributeValueMemberS).Value < overlayHex(uint64(w+1)^signBit)
				if below != (v <= w) {
					t.Fatalf("overlay of %v at version %d below the bound of %d: %v", val, v, w, below)
				}
			}
		}
	}
	for _, bad := range []types.AttributeValue{
		&types.AttributeValueMemberS{Value: "00000000000000"},
		&types.AttributeValueMemberS{Value: "0000000000000zzzSx"},
		&types.AttributeValueMemberS{Value: "0000000000000000Yx"},
		&types.AttributeValueMemberS{Value: "0000000000000000X!!"},
		&types.AttributeValueMemberN{Value: "1"},
		&types.AttributeValueMemberB{Value: []byte("0000000000000000Sx")},
	} {
		if c, err := decodeOverlay("a", bad); err == nil {
			t.Errorf("%#v decoded as %+v", bad, c)
		}
	}
	if _, err := decodeOverlay("1a", overlayValue(1, tablekit.Integer(1))); err == nil {
		t.Error("an overlay named 1a decoded")
	}
}

// Overlay cells merge with the packed ones: a new version joins the
// column, one of the same version replaces the packed cell.
func TestOverlayMerge(t *testing.T) {
	rev := &types.AttributeValueMemberS{Value: "AAAAAAAAAAA 5"}
	item := map[string]types.AttributeValue{
		attrRevision: rev,
		attrText:     &types.AttributeValueMemberS{Value: "a~1Sxb~1Sy~1@3Sz"},
		"b":          overlayValue(5, tablekit.String("B5")),
		"a":          overlayValue(7, tablekit.Binary([]byte("A7"))),
		"c":          overlayValue(1, tablekit.Integer(3)),
		attrUpdates:  &types.AttributeValueMemberN{Value: "3"},
	}
	r, err := decodeRow(item)
	if err != nil {
		t.Fatal(err)
	}
	checkCells(t, r.Cells, []tablekit.Column{
		{Name: "a", Value: tablekit.Binary([]byte("A7")), Version: 7},
		{Name: "a", Value: tablekit.String("x"), Version: 5},
		{Name: "b", Value: tablekit.String("B5"), Version: 5},
		{Name: "b", Value: tablekit.String("z"), Version: 3},
		{Name: "c", Value: tablekit.Integer(3), Version: 1},
	})
}
