package awsdynamodb_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
)

// newGoroutines returns the stacks of the live goroutines started after
// the one numbered floor (ids only grow), and the highest id alive. A count
// of all goroutines would also see those of earlier tests winding down (an
// idle connection dynalite closes after 5 s), which can hide a leak or fail
// a test that proves something; the goroutines a test started cannot.
func newGoroutines(floor int) (stacks []string, top int) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		rest, ok := strings.CutPrefix(g, "goroutine ")
		if !ok {
			continue
		}
		id, err := strconv.Atoi(rest[:strings.IndexByte(rest, ' ')])
		if err != nil {
			continue
		}
		top = max(top, id)
		if id > floor {
			stacks = append(stacks, g)
		}
	}
	return stacks, top
}

// goroutineFloor is the highest goroutine id alive: newGoroutines(floor)
// later returns those started since.
func goroutineFloor() int {
	_, top := newGoroutines(math.MaxInt)
	return top
}

// leftGoroutines waits up to d for every goroutine started after floor to
// end, and returns the stacks of those still alive.
func leftGoroutines(floor int, d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		left, _ := newGoroutines(floor)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCloseRightAfterACall: a Backend closed at once after a call leaves no
// connection (and no goroutine) behind, whether Open built the HTTP client
// itself or the default AWS configuration did (AWS_CA_BUNDLE makes it
// build one). Issue 18 item 11: a connection that went back to the idle
// pool just after Close, and the default configuration's client, stayed
// open with their goroutines.
//
// The calls go through a proxy that never closes a connection on the
// client's side (dynalite closes idle ones after 5 s), so a connection the
// backend leaves open stays open, and the count, taken once it settles,
// cannot pass by waiting.
func TestCloseRightAfterACall(t *testing.T) {
	ep := holdingProxy(t, needDynalite(t))
	ctx := context.Background()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CA_BUNDLE", writeCABundle(t))
	for _, tc := range []struct {
		name string
		open func() (*tablekit.Client, error)
	}{
		{"URL (default configuration)", func() (*tablekit.Client, error) {
			return tablekit.Open(ctx, "dynamodb://?region=us-east-1&endpoint="+ep)
		}},
		{"Open with a configuration without HTTP client", func() (*tablekit.Client, error) {
			cfg := awsConfig(nil)
			b, err := awsdynamodb.Open(ctx, &awsdynamodb.Options{AWS: &cfg, Endpoint: ep})
			if err != nil {
				return nil, err
			}
			return tablekit.NewClient(b), nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			floor := goroutineFloor()
			for range 5 {
				db, err := tc.open()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.ListTables(ctx); err != nil {
					t.Fatal(err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if left := leftGoroutines(floor, 10*time.Second); len(left) > 0 {
				t.Errorf("%d goroutines started by 5 Open/ListTables/Close rounds still alive 10 s after:\n%s", len(left), strings.Join(left, "\n\n"))
			}
		})
	}
}

// holdingProxy forwards connections to the server at endpoint and returns
// its own endpoint. When the server closes a connection, the proxy keeps
// the client's side open until the client closes it.
func holdingProxy(t *testing.T, endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				up, err := net.Dial("tcp", u.Host)
				if err != nil {
					c.Close()
					return
				}
				go func() {
					io.Copy(up, c) // until the client closes
					up.Close()
					c.Close()
				}()
				io.Copy(c, up) // until the server closes: c stays open
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// writeCABundle writes a PEM file holding one self-signed certificate.
func writeCABundle(t *testing.T) string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tablekit test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
