package main

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/common"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"
)

var probe = flag.Bool("emulator.probe", false, "run TestProbeEmulatorMemory: the issue 18 response-memory probes against the built emulator (several minutes, about 1 GB of traffic)")

// vmRSS returns the resident set size of process pid.
func vmRSS(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// signedGetRow is a GetRow of row k of table signed as the SDK signs it.
func signedGetRow(t *testing.T, endpoint, table, k string) *http.Request {
	t.Helper()
	body, err := proto.Marshal(&otsprotocol.GetRowRequest{TableName: proto.String(table), PrimaryKey: key(k).Build(false), MaxVersions: proto.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.NewRequest(http.MethodPost, endpoint+"/GetRow", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(body)
	r.Header.Set("x-ots-date", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
	r.Header.Set("x-ots-apiversion", "2015-12-31")
	r.Header.Set("x-ots-accesskeyid", "tstest-access-key-id")
	r.Header.Set("x-ots-instancename", "tstest")
	r.Header.Set("x-ots-contentmd5", base64.StdEncoding.EncodeToString(sum[:]))
	sig, err := tablestore.GetSignature("/GetRow", http.MethodPost, &common.DefaultCredentials{AccessKeyID: "tstest-access-key-id", AccessKeySecret: "s"}, r.Header.Clone())
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("x-ots-signature", sig)
	return r
}

// TestProbeEmulatorMemory runs issue 18's response-memory probes against
// the built emulator (in memory) and measures its RSS: 8 clients reading
// a 128 MiB row (32 UpdateRows) at once, then 200 clients requesting a
// 16 MiB row and never reading the answer, while an honest client calls
// PutRow and GetRow. Target: RSS under 512 MiB, honest calls under 1 s
// (asserted: 5 s). Run with go test ./cmd/tablestore-emulator/ -run
// ProbeEmulatorMemory -emulator.probe -v.
func TestProbeEmulatorMemory(t *testing.T) {
	if !*probe {
		t.Skip("-emulator.probe not set")
	}
	p := start(t, []string{envAccessKeySecret + "=s"}, "-addr", "127.0.0.1:0")
	pid := p.cmd.Process.Pid
	c := tablestore.NewClient(p.endpoint, "tstest", "tstest-access-key-id", "s")
	createTable(t, c, "t")
	val := bytes.Repeat([]byte{'v'}, 2<<20-1<<10)
	for _, row := range []struct {
		k       string
		updates int
	}{{"big", 32}, {"mid", 4}} { // 4 MiB an update
		for i := range row.updates {
			ch := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: key(row.k)}
			ch.PutColumn(fmt.Sprintf("c%03d", 2*i), val)
			ch.PutColumn(fmt.Sprintf("c%03d", 2*i+1), val)
			ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
			if _, err := c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: ch}); err != nil {
				t.Fatalf("UpdateRow %d of %s: %v", i, row.k, err)
			}
		}
	}
	honest := func(stop <-chan struct{}) <-chan time.Duration {
		out := make(chan time.Duration, 1)
		go func() {
			var worst time.Duration
			for i := 0; ; i++ {
				select {
				case <-stop:
					out <- worst
					return
				case <-time.After(50 * time.Millisecond):
				}
				start := time.Now()
				if err := put(c, "t", "small", strconv.Itoa(i)); err != nil {
					t.Errorf("honest PutRow: %v", err)
				}
				if v, ok := get(t, c, "t", "small"); !ok || v != strconv.Itoa(i) {
					t.Errorf("honest GetRow: %q %v", v, ok)
				}
				worst = max(worst, time.Since(start))
			}
		}()
		return out
	}
	peakRSS := func(stop <-chan struct{}) <-chan int64 {
		out := make(chan int64, 1)
		go func() {
			var peak int64
			for {
				peak = max(peak, vmRSS(t, pid))
				select {
				case <-stop:
					out <- peak
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		}()
		return out
	}
	base := vmRSS(t, pid)

	// 8 readers of the 128 MiB row, reading every byte.
	stop := make(chan struct{})
	rss, worst := peakRSS(stop), honest(stop)
	var wg sync.WaitGroup
	hc := &http.Client{Transport: &http.Transport{}}
	for range 8 {
		r := signedGetRow(t, p.endpoint, "t", "big")
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := hc.Do(r)
			if err != nil {
				t.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || n < 128<<20-1<<20 {
				t.Errorf("GetRow of the 128 MiB row: status %d, %d bytes", resp.StatusCode, n)
			}
		}()
	}
	wg.Wait()
	close(stop)
	peak1, worst1 := <-rss, <-worst
	t.Logf("8 readers of a 128 MiB row: emulator RSS %d MiB before, peak %d MiB; slowest honest PutRow+GetRow %v", base>>20, peak1>>20, worst1.Round(time.Millisecond))

	// 200 clients that never read a 16 MiB answer.
	stop = make(chan struct{})
	rss, worst = peakRSS(stop), honest(stop)
	addr := strings.TrimPrefix(p.endpoint, "http://")
	var conns []net.Conn
	for range 200 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		if err := signedGetRow(t, p.endpoint, "t", "mid").Write(conn); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(30 * time.Second) // the answers are being written, or wait for room
	close(stop)
	peak2, worst2 := <-rss, <-worst
	for _, conn := range conns {
		conn.Close()
	}
	t.Logf("200 clients not reading a 16 MiB answer (30 s): emulator RSS peak %d MiB; slowest honest PutRow+GetRow %v", peak2>>20, worst2.Round(time.Millisecond))
	for _, pk := range []int64{peak1, peak2} {
		if pk > 512<<20 {
			t.Errorf("emulator RSS peaked at %d MiB, target 512 MiB", pk>>20)
		}
	}
	if w := max(worst1, worst2); w > 5*time.Second {
		t.Errorf("an honest call took %v during the probes", w)
	}
}
