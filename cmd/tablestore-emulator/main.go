// Command tablestore-emulator is for tests, in any language, that need a
// Tablestore: it runs a Tablestore-wire-compatible server (package
// backend/aliyuntablestore/tstest); point any Tablestore SDK at the endpoint
// it prints.
//
// Install and run the binary (rather than `go run`, whose child process
// keeps serving if `go run` itself is killed):
//
//	go install github.com/tablekit/tablekit/cmd/tablestore-emulator@latest
//	TABLESTORE_ACCESS_KEY_SECRET=s3cret tablestore-emulator -addr 127.0.0.1:8800 -data /tmp/ts
//
// It prints the endpoint as the first line on standard output and a
// banner on standard error (endpoint, instance, access key ID, storage,
// admin endpoint; never the secret), then serves until SIGINT or SIGTERM,
// letting requests in flight finish.
//
// The secret comes from the environment variable
// TABLESTORE_ACCESS_KEY_SECRET or from the file named by
// -access-key-secret-file, never from a flag (flags show in ps). Without
// either, the public default secret of package tstest is used, and the
// emulator refuses to listen on anything but a loopback address.
//
// Without -data the data lives in memory and is gone when the program
// stops. With -data DIR it is kept in DIR by tablekit's durable engine
// (package fileengine), and the table state tablekit does not model
// (reserved throughput, defined columns, secondary indexes) in
// DIR/tstest-tables.json: every acknowledged write survives a restart, a
// kill -9 included.
//
// With -admin-addr the test-control endpoint (tstest.Server.AdminHandler)
// listens there: set or advance the server's clock, reset all data, inject
// faults. It requires the token in TABLESTORE_EMULATOR_ADMIN_TOKEN or in
// the file named by -admin-token-file, of at least 16 characters, and
// listens on a loopback address only (a bare ":port" means 127.0.0.1)
// unless -admin-allow-remote is given.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore/tstest"
	"github.com/tablekit/tablekit/fileengine"
)

// Environment variables the command reads.
const (
	envAccessKeyID     = "TABLESTORE_ACCESS_KEY_ID"
	envAccessKeySecret = "TABLESTORE_ACCESS_KEY_SECRET"
	envAdminToken      = "TABLESTORE_EMULATOR_ADMIN_TOKEN"
)

// metaFileName is the file in the -data directory that keeps what
// Tablestore has and tablekit's engine does not: reserved throughput,
// defined columns, secondary indexes.
const metaFileName = "tstest-tables.json"

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr, sig))
}

const usageHead = `Usage: tablestore-emulator [flags]

Runs a Tablestore-compatible server for tests: point any Tablestore SDK at
the endpoint printed on the first line of standard output.

Environment:
  TABLESTORE_ACCESS_KEY_ID         access key ID (default %s; -access-key-id overrides)
  TABLESTORE_ACCESS_KEY_SECRET     the secret requests must be signed with (or -access-key-secret-file);
                                   without one the public default secret is used, on loopback only
  TABLESTORE_EMULATOR_ADMIN_TOKEN  bearer token of the admin endpoint (or -admin-token-file)

Without -data, data lives in memory and is lost when the program stops.

Flags:
`

// run is the command; it returns the exit code once a signal arrives on
// sig (or at once on a usage or start-up error).
func run(args []string, getenv func(string) string, stdout, stderr io.Writer, sig <-chan os.Signal) int {
	fs := flag.NewFlagSet("tablestore-emulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, usageHead, tstest.DefaultAccessKeyID)
		fs.PrintDefaults()
	}
	defID := tstest.DefaultAccessKeyID
	if v := getenv(envAccessKeyID); v != "" {
		defID = v
	}
	addr := fs.String("addr", "127.0.0.1:8800", "TCP address to listen on (port 0 picks a free port)")
	instance := fs.String("instance", tstest.DefaultInstanceName, "instance name requests must carry")
	akID := fs.String("access-key-id", defID, "access key ID requests must carry (default from $"+envAccessKeyID+")")
	secretFile := fs.String("access-key-secret-file", "", "file holding the access key secret (instead of $"+envAccessKeySecret+")")
	dataDir := fs.String("data", "", "directory to keep the data in (durable across restarts and kill -9); empty: in memory")
	adminAddr := fs.String("admin-addr", "", "address of the test-control admin endpoint; empty: off")
	adminTokenFile := fs.String("admin-token-file", "", "file holding the admin token (instead of $"+envAdminToken+")")
	adminRemote := fs.Bool("admin-allow-remote", false, "let -admin-addr be a non-loopback address")
	maxConns := fs.Int("max-conns", tstest.DefaultMaxConns, "most connections open at once")
	readTimeout := fs.Duration("read-timeout", tstest.DefaultReadTimeout, "longest time to read a request, body included")
	writeTimeout := fs.Duration("write-timeout", tstest.DefaultWriteTimeout, "longest time to serve and write a response")
	idleTimeout := fs.Duration("idle-timeout", tstest.DefaultIdleTimeout, "idle keep-alive connections are closed after this")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tablestore-emulator: unexpected arguments %q (a secret is never a flag: use $%s)\n", fs.Args(), envAccessKeySecret)
		return 2
	}
	secret, secretFrom, err := fromEnvOrFile(getenv(envAccessKeySecret), "$"+envAccessKeySecret, *secretFile)
	if err != nil {
		fmt.Fprintln(stderr, "tablestore-emulator:", err)
		return 2
	}
	if secret == "" {
		if !loopback(*addr) {
			fmt.Fprintf(stderr, "tablestore-emulator: refusing to serve %s with the public default secret: set $%s or -access-key-secret-file\n", *addr, envAccessKeySecret)
			return 2
		}
		secret, secretFrom = tstest.DefaultAccessKeySecret, "the public default (loopback only)"
	}
	opts := tstest.Options{
		Addr: *addr, InstanceName: *instance, AccessKeyID: *akID, AccessKeySecret: secret,
		MaxConns: *maxConns, ReadTimeout: *readTimeout, WriteTimeout: *writeTimeout, IdleTimeout: *idleTimeout,
	}
	adminFrom := ""
	if *adminAddr != "" {
		opts.AdminAddr, opts.AdminAllowRemote = *adminAddr, *adminRemote
		opts.AdminToken, adminFrom, err = fromEnvOrFile(getenv(envAdminToken), "$"+envAdminToken, *adminTokenFile)
		if err == nil && opts.AdminToken == "" {
			err = fmt.Errorf("-admin-addr needs a token: set $%s or -admin-token-file", envAdminToken)
		}
		if err != nil {
			fmt.Fprintln(stderr, "tablestore-emulator:", err)
			return 2
		}
	}
	storage := "in memory: everything is lost when the program stops (-data DIR keeps it)"
	var closeBackend func() error
	if *dataDir != "" {
		e, err := fileengine.Open(*dataDir, nil)
		if err != nil {
			fmt.Fprintln(stderr, "tablestore-emulator:", err)
			return 1
		}
		opts.Backend, closeBackend = e, e.Close
		opts.MetaFile = filepath.Join(*dataDir, metaFileName)
		storage = "durable in " + *dataDir + " (every acknowledged write survives a restart or kill -9)"
	}
	srv, err := tstest.NewServer(opts)
	if err != nil {
		if closeBackend != nil {
			closeBackend()
		}
		fmt.Fprintln(stderr, "tablestore-emulator:", err)
		return 1
	}
	fmt.Fprintln(stdout, srv.Endpoint())
	fmt.Fprintf(stderr, "tablestore-emulator: serving the Tablestore API at %s\n", srv.Endpoint())
	fmt.Fprintf(stderr, "  instance:      %s\n", *instance)
	fmt.Fprintf(stderr, "  access key id: %s (secret from %s)\n", *akID, secretFrom)
	fmt.Fprintf(stderr, "  data:          %s\n", storage)
	if a := srv.AdminEndpoint(); a != "" {
		fmt.Fprintf(stderr, "  admin:         %s/admin/v1/ (token from %s)\n", a, adminFrom)
	} else {
		fmt.Fprintf(stderr, "  admin:         off (-admin-addr turns it on)\n")
	}
	fmt.Fprintf(stderr, "  stop with Ctrl-C or SIGTERM; requests in flight finish\n")
	s := <-sig
	start := time.Now()
	srv.Close()
	code := 0
	if closeBackend != nil {
		if err := closeBackend(); err != nil {
			fmt.Fprintln(stderr, "tablestore-emulator: closing the data:", err)
			code = 1
		}
	}
	fmt.Fprintf(stderr, "tablestore-emulator: %v: stopped in %v\n", s, time.Since(start).Round(time.Millisecond))
	return code
}

// fromEnvOrFile returns a secret from an environment variable's value or
// from a file (trailing newlines removed), and says where it came from.
// Giving both is an error; giving neither returns "".
func fromEnvOrFile(env, envName, file string) (val, from string, err error) {
	switch {
	case env != "" && file != "":
		return "", "", tablekit.Errorf(tablekit.ErrInvalidArgument, "both %s and a file are set; give one", envName)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", "", err
		}
		v := strings.TrimRight(string(b), "\r\n")
		if v == "" {
			return "", "", tablekit.Errorf(tablekit.ErrInvalidArgument, "%s is empty", file)
		}
		return v, "file " + file, nil
	case env != "":
		return env, envName, nil
	}
	return "", "", nil
}

// loopback reports whether addr's host is a loopback address or localhost.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
