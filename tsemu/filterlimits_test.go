package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tablekit/tablekit"
)

// rawFilter is a filter already serialized, for filters too large for
// the SDK to build quickly.
type rawFilter []byte

func (f rawFilter) Serialize() []byte { return f }

func (f rawFilter) ToFilter() *otsprotocol.Filter {
	var out otsprotocol.Filter
	if err := proto.Unmarshal(f, &out); err != nil {
		panic(err)
	}
	return &out
}

// bigOr returns an OR of n copies of one single-column condition.
func bigOr(n int) rawFilter {
	one := tablestore.NewSingleColumnCondition("v", tablestore.CT_EQUAL, int64(7)).Serialize()
	var comp []byte
	comp = protowire.AppendTag(comp, 1, protowire.VarintType)
	comp = protowire.AppendVarint(comp, uint64(otsprotocol.LogicalOperator_LO_OR))
	for range n {
		comp = protowire.AppendTag(comp, 2, protowire.BytesType)
		comp = protowire.AppendBytes(comp, one)
	}
	var f []byte
	f = protowire.AppendTag(f, 1, protowire.VarintType)
	f = protowire.AppendVarint(f, uint64(otsprotocol.FilterType_FT_COMPOSITE_COLUMN_VALUE))
	f = protowire.AppendTag(f, 2, protowire.BytesType)
	return protowire.AppendBytes(f, comp)
}

// orFilter returns an OR of n single-column conditions.
func orFilter(n int) *tablestore.CompositeColumnValueFilter {
	f := tablestore.NewCompositeColumnCondition(tablestore.LO_OR)
	for i := range n {
		f.AddFilter(tablestore.NewSingleColumnCondition("v", tablestore.CT_EQUAL, int64(i)))
	}
	return f
}

// TestProbeFilterCaps is the probe "an OR of 100,000 conditions over 10,000
// rows blocked the table for 10.4 s": such a filter is refused at the door
// and writers to the table do not stall; filters within the caps work.
func TestProbeFilterCaps(t *testing.T) {
	srv, c := listenEnv(t, Options{})
	tt := &timingTransport{next: http.DefaultTransport}
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.RetryTimes = 1
	cfg.Transport = tt
	bigc := tablestore.NewClientWithConfig(srv.Endpoint(), srv.InstanceName(), srv.AccessKeyID(), srv.AccessKeySecret(), "", cfg)
	meta := &tablestore.TableMeta{TableName: "t"}
	meta.AddPrimaryKeyColumn("k", tablestore.PrimaryKeyType_INTEGER)
	if _, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 1), ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
		t.Fatal(err)
	}
	const rows = 10000
	tbl := srv.client.Table("t") // seeded in process: the probe is the scan
	for j := range rows {
		if err := tbl.PutRow(context.Background(), tablekit.Key("k", tablekit.Integer(int64(j))),
			[]tablekit.Column{{Name: "v", Value: tablekit.Integer(int64(j))}}); err != nil {
			t.Fatal(err)
		}
	}
	scanWith := func(c *tablestore.TableStoreClient, f tablestore.ColumnFilter) (*tablestore.GetRangeResponse, error) {
		start, end := &tablestore.PrimaryKey{}, &tablestore.PrimaryKey{}
		start.AddPrimaryKeyColumnWithMinValue("k")
		end.AddPrimaryKeyColumnWithMaxValue("k")
		return c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
			TableName: "t", StartPrimaryKey: start, EndPrimaryKey: end, Direction: tablestore.FORWARD, MaxVersion: 1, Filter: f,
		}})
	}
	scan := func(f tablestore.ColumnFilter) (*tablestore.GetRangeResponse, error) { return scanWith(c, f) }
	// Writers run during the big scan; their slowest call is the stall.
	stop := make(chan struct{})
	stall := make(chan time.Duration, 1)
	go func() {
		var worst time.Duration
		for i := 0; ; i++ {
			select {
			case <-stop:
				stall <- worst
				return
			default:
			}
			ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", int64(i%rows))}
			ch.AddColumn("v", int64(i%rows))
			ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
			s := time.Now()
			if _, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
				t.Errorf("writer: %v", err)
			}
			worst = max(worst, time.Since(s))
		}
	}()
	_, err := scanWith(bigc, bigOr(100000))
	close(stop)
	worst := <-stall
	took := tt.last()
	t.Logf("OR of 100,000 conditions (%d KB) over %d rows: server answered in %v; slowest concurrent write %v",
		tt.lastSize()>>10, rows, took.Round(time.Millisecond), worst.Round(time.Millisecond))
	wantOTS(t, err, 400, "OTSParameterInvalid", "The LO_OR filter has more than 32 sub filters; the limit is 32.")
	if took > 3*time.Second || worst > 2*time.Second {
		t.Errorf("the refused scan took %v and stalled a writer %v", took, worst)
	}

	// At the caps: 32 conditions work; 33 in total (even spread over
	// narrow composites) do not.
	r, err := scan(orFilter(MaxFilterConditions))
	if err != nil || len(r.Rows) != MaxFilterConditions {
		t.Fatalf("OR of %d: %d rows, %v", MaxFilterConditions, len(r.Rows), err)
	}
	wide := tablestore.NewCompositeColumnCondition(tablestore.LO_AND)
	wide.AddFilter(orFilter(16))
	wide.AddFilter(orFilter(16))
	if _, err := scan(wide); err != nil {
		t.Fatal(err)
	}
	wide.AddFilter(orFilter(1))
	_, err = scan(wide)
	wantOTS(t, err, 400, "OTSParameterInvalid", "The filter has more than 32 conditions; the limit is 32.")
	// The cap holds for column conditions of writes too.
	ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", int64(1))}
	ch.AddColumn("v", int64(1))
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	ch.SetColumnCondition(orFilter(33))
	_, err = c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
	wantOTS(t, err, 400, "OTSParameterInvalid", "The LO_OR filter has more than 32 sub filters; the limit is 32.")
}

// timingTransport times each round trip, the request already encoded.
type timingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	d    time.Duration
	size int64
}

func (tt *timingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	s := time.Now()
	resp, err := tt.next.RoundTrip(r)
	if err == nil {
		// The answer is read by the caller; an error answer is small.
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		err = rerr
	}
	tt.mu.Lock()
	tt.d, tt.size = time.Since(s), r.ContentLength
	tt.mu.Unlock()
	return resp, err
}

func (tt *timingTransport) last() time.Duration {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.d
}

func (tt *timingTransport) lastSize() int64 {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.size
}
