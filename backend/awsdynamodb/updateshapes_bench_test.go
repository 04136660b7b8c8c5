package awsdynamodb_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// BenchmarkUpdateShapes measures what dynalite charges for each part of
// the adapter's one-call update (fastwrite.go), apart from the adapter:
// the raw SDK updates one 100-byte field of a 1 KB item (BenchmarkPoint's
// raw rows) with UpdateItems that add one part at a time to the plain
// "SET field3 = :v" ("plain"): the generation term, the overlay cell's
// term, both, the revision set if absent, set always, the ADD to .u, .u
// set to a fresh value, the .w stamp, and all of them as the adapter sends
// them ("full", and "full-setu" with .u set rather than added to). The
// shapes are called in turn, the order rotated each iteration; it reports
// the plain call's p50 and each shape's p50 over it:
//
//	go test -run '^$' -bench UpdateShapes -benchtime 600x -count 2 ./backend/awsdynamodb/
func BenchmarkUpdateShapes(b *testing.B) {
	ctx := context.Background()
	c := newClient(b, nil)
	raw := rawTable(b, c)
	const n = 100
	for i := range n {
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(raw), Item: benchItem("part", i)}); err != nil {
			b.Fatal(err)
		}
	}
	type shape struct {
		name, set, cond string
	}
	shapes := []shape{
		{"plain", "SET field3 = :v", ""},
		{"cond-g", "SET field3 = :v", "NOT #g > :g"},
		{"cond-col", "SET field3 = :v", "NOT field3 >= :b"},
		{"cond-both", "SET field3 = :v", "NOT #g > :g AND NOT field3 >= :b"},
		{"ine-r", "SET #r = if_not_exists(#r, :r), field3 = :v", ""},
		{"set-r", "SET #r = :r, field3 = :v", ""},
		{"add-u", "SET field3 = :v ADD #u :one", ""},
		{"set-u", "SET field3 = :v, #u2 = :r", ""},
		{"stamp", "SET field3 = :v, #w = :w", ""},
		{"full", "SET #r = if_not_exists(#r, :r), field3 = :v, #w = :w ADD #u :one", "NOT #g > :g AND NOT field3 >= :b"},
		{"full-setu", "SET #r = if_not_exists(#r, :r), field3 = :v, #w = :w, #u2 = :r", "NOT #g > :g AND NOT field3 >= :b"},
	}
	call := func(s shape, i int) time.Duration {
		names := map[string]string{}
		vals := map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: "8000018bcfe56800S" + benchValue(i)}}
		all := s.set + " " + s.cond
		for ref, name := range map[string]string{"#g": ".g", "#r": ".r", "#u": ".u", "#w": ".w", "#u2": ".u2"} {
			if contains(all, ref) {
				names[ref] = name
			}
		}
		addv := func(ref string, v types.AttributeValue) {
			if contains(all, ref) {
				vals[ref] = v
			}
		}
		addv(":g", &types.AttributeValueMemberN{Value: "1"})
		addv(":b", &types.AttributeValueMemberS{Value: "ffff"})
		addv(":r", &types.AttributeValueMemberS{Value: "abcdefghijk" + strconv.Itoa(i)})
		addv(":one", &types.AttributeValueMemberN{Value: "1"})
		addv(":w", &types.AttributeValueMemberS{Value: "U1764650000000"})
		in := &dynamodb.UpdateItemInput{
			TableName: aws.String(raw),
			Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: "part"},
				"sk": &types.AttributeValueMemberN{Value: strconv.Itoa(i % n)},
			},
			UpdateExpression: aws.String(s.set), ExpressionAttributeValues: vals,
		}
		if len(names) > 0 {
			in.ExpressionAttributeNames = names
		}
		if s.cond != "" {
			in.ConditionExpression = aws.String(s.cond)
		}
		t0 := time.Now()
		if _, err := c.UpdateItem(ctx, in); err != nil {
			b.Fatal(s.name, err)
		}
		return time.Since(t0)
	}
	for i := range 300 {
		for _, s := range shapes {
			call(s, i)
		}
	}
	times := make([][]time.Duration, len(shapes))
	b.ResetTimer()
	for i := range b.N {
		for j := range shapes {
			k := (j + i) % len(shapes)
			times[k] = append(times[k], call(shapes[k], i))
		}
	}
	med := func(d []time.Duration) time.Duration { d = slices.Clone(d); slices.Sort(d); return d[len(d)/2] }
	p := med(times[0])
	b.ReportMetric(float64(p.Microseconds()), "plain-p50-us")
	for j, s := range shapes[1:] {
		b.ReportMetric(float64(med(times[j+1]))/float64(p), s.name+"/plain")
	}
}

// contains reports whether the expression s uses the reference ref (not
// a longer one it starts: "#u" is not in "#u2").
func contains(s, ref string) bool {
	for rest := s; ; {
		i := strings.Index(rest, ref)
		if i < 0 {
			return false
		}
		rest = rest[i+len(ref):]
		if rest == "" || !isRefChar(rest[0]) {
			return true
		}
	}
}

func isRefChar(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
