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
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
)

// settledGoroutines waits until the goroutine count holds still for a
// while (goroutines of earlier tests winding down) and returns it.
func settledGoroutines() int {
	n, same := runtime.NumGoroutine(), 0
	for deadline := time.Now().Add(10 * time.Second); same < 5 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		if m := runtime.NumGoroutine(); m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
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
			before := settledGoroutines()
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
			deadline := time.Now().Add(10 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > before {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines 10 s after 5 Open/ListTables/Close rounds, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
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
