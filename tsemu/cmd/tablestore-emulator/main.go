// Command tablestore-emulator serves the Tablestore API (package
// tsemu) over any tablekit backend, for tests
// written in any language and for running a Tablestore application
// unchanged on another store: point any Tablestore SDK at the endpoint it
// prints.
//
// Install and run the binary (rather than `go run`, whose child process
// keeps serving if `go run` itself is killed):
//
//	go install github.com/tablekit/tablekit/tsemu/cmd/tablestore-emulator@latest
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
// either, the public default secret of package tsemu is used, and the
// emulator refuses to listen on anything but a loopback address.
//
// Where the data lives: -backend URL names any tablekit backend (every
// scheme of package all): mem:// (the default: in memory, gone when the
// program stops), file://DIR (tablekit's durable engine, package
// fileengine), dynamodb://?region=R&endpoint=URL (DynamoDB, dynalite or
// DynamoDB Local), bigtable://PROJECT/INSTANCE (Bigtable or its
// emulator), tablestore://INSTANCE?endpoint=URL. Credentials come from
// each adapter's usual environment, never from the URL. -data DIR is
// shorthand for -backend file://DIR: every acknowledged write survives a
// restart, a kill -9 included.
//
// The table state Tablestore has and tablekit's model does not (reserved
// throughput, defined columns, creation time, secondary index
// definitions) is kept in the file named by -meta, saved durably before
// each table-level call is answered; with a file:// backend it defaults to
// DIR/tstest-tables.json. Over another backend without -meta it lives in
// memory: after a restart the tables and rows are all there, but
// DescribeTable reports no reserved throughput, no defined columns and a
// new creation time, and a secondary index is no longer known as one (its
// table shows in ListTable as an ordinary table and writes to the base
// table no longer maintain it). Give -meta FILE to keep it.
//
// With -admin-addr the test-control endpoint (tsemu.Server.AdminHandler)
// listens there: set or advance the server's clock, reset all data, inject
// faults. It requires the token in TABLESTORE_EMULATOR_ADMIN_TOKEN or in
// the file named by -admin-token-file, of at least 16 characters, and
// listens on a loopback address only (a bare ":port" means 127.0.0.1)
// unless -admin-allow-remote is given.
//
// Time: the server stamps cells written without a version, checks the
// version window and expires cells by TTL with its own clock, as
// Tablestore does. -clock manual (or -clock 2030-01-01T00:00:00Z) freezes
// it, so that it moves only through the admin endpoint; a Go test then
// shares it with its tablekit client through tsemu.AdminClock (Set and
// Advance move the server, then the client, to the same time), and a
// tablekit.ManualClock-driven test runs against the emulator as against
// every other backend.
//
// Local transactions (over a backend with atomic writes) are aborted after
// -transaction-timeout of idleness on that clock (default 60 s, the
// service's), so advancing a manual clock expires them; at most
// -max-transactions are open at once. They live in memory: a restart
// aborts them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tablekit/tablekit"
	_ "github.com/tablekit/tablekit/all" // every backend scheme for -backend
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

// Environment variables the command reads.
const (
	envAccessKeyID     = "TABLESTORE_ACCESS_KEY_ID"
	envAccessKeySecret = "TABLESTORE_ACCESS_KEY_SECRET"
	envAdminToken      = "TABLESTORE_EMULATOR_ADMIN_TOKEN"
)

// metaFileName is the file in a file:// backend's directory that keeps,
// unless -meta says otherwise, what Tablestore has and tablekit's model
// does not: reserved throughput, defined columns, secondary indexes.
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

Where the data lives (-backend URL, any tablekit backend):
  mem://                                   in memory, lost when the program stops (the default)
  file:///var/lib/ts                       durable on local disk (-data DIR is the same)
  dynamodb://?region=R&endpoint=URL        DynamoDB, dynalite, DynamoDB Local (AWS credentials from the environment)
  bigtable://PROJECT/INSTANCE              Bigtable or its emulator (BIGTABLE_EMULATOR_HOST)
  tablestore://INSTANCE?endpoint=URL       Tablestore itself
The table state tablekit does not model (reserved throughput, defined
columns, creation time, secondary indexes, stream times) is kept in -meta FILE; with
file://DIR it defaults to DIR/tstest-tables.json, otherwise it lives in
memory and is lost at restart (the tables and rows are not).

Flags:
`

// run is the command; it returns the exit code once a signal arrives on
// sig (or at once on a usage or start-up error).
func run(args []string, getenv func(string) string, stdout, stderr io.Writer, sig <-chan os.Signal) int {
	f, code, ok := parseFlags(args, getenv, stderr)
	if !ok {
		return code
	}
	st, err := configure(&f, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "tablestore-emulator:", err)
		return 2
	}
	srv, code, err := startServer(st, &f)
	if err != nil {
		fmt.Fprintln(stderr, "tablestore-emulator:", err)
		return code
	}
	banner(stdout, stderr, srv, st, &f)
	return serve(sig, srv, st.opts.Backend, stderr)
}

// cmdFlags are the command's flags.
type cmdFlags struct {
	addr, instance, akID, secretFile string
	backendURL, dataDir, metaFile    string
	adminAddr, adminTokenFile, clock string
	adminRemote                      bool
	maxConns, maxTxns                int
	readTimeout, writeTimeout        time.Duration
	idleTimeout, txnTimeout          time.Duration
}

// parseFlags parses args. When ok is false run ends with code: 0 after
// -help, 2 after a usage error (reported on stderr).
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (f cmdFlags, code int, ok bool) {
	fs := flag.NewFlagSet("tablestore-emulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, usageHead, tsemu.DefaultAccessKeyID)
		fs.PrintDefaults()
	}
	defID := tsemu.DefaultAccessKeyID
	if v := getenv(envAccessKeyID); v != "" {
		defID = v
	}
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8800", "TCP address to listen on (port 0 picks a free port)")
	fs.StringVar(&f.instance, "instance", tsemu.DefaultInstanceName, "instance name requests must carry")
	fs.StringVar(&f.akID, "access-key-id", defID, "access key ID requests must carry (default from $"+envAccessKeyID+")")
	fs.StringVar(&f.secretFile, "access-key-secret-file", "", "file holding the access key secret (instead of $"+envAccessKeySecret+")")
	fs.StringVar(&f.backendURL, "backend", "", "URL of the tablekit backend that stores the data (mem://, file://DIR, dynamodb://…, bigtable://…); default mem://")
	fs.StringVar(&f.dataDir, "data", "", "shorthand for -backend file://DIR: durable across restarts and kill -9")
	fs.StringVar(&f.metaFile, "meta", "", "file keeping the table state tablekit does not model; default DIR/"+metaFileName+" with a file:// backend, else in memory")
	fs.StringVar(&f.adminAddr, "admin-addr", "", "address of the test-control admin endpoint; empty: off")
	fs.StringVar(&f.adminTokenFile, "admin-token-file", "", "file holding the admin token (instead of $"+envAdminToken+")")
	fs.BoolVar(&f.adminRemote, "admin-allow-remote", false, "let -admin-addr be a non-loopback address")
	fs.StringVar(&f.clock, "clock", "system", `the server's clock: "system", or "manual" (frozen at the start time) or an RFC 3339 time (frozen there), moved only through the admin endpoint`)
	fs.IntVar(&f.maxConns, "max-conns", tsemu.DefaultMaxConns, "most connections open at once")
	fs.DurationVar(&f.readTimeout, "read-timeout", tsemu.DefaultReadTimeout, "longest time to read a request, body included")
	fs.DurationVar(&f.writeTimeout, "write-timeout", tsemu.DefaultWriteTimeout, "longest time to serve and write a response")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", tsemu.DefaultIdleTimeout, "idle keep-alive connections are closed after this")
	fs.DurationVar(&f.txnTimeout, "transaction-timeout", tsemu.DefaultTransactionTimeout, "a local transaction idle this long (on the server's clock) is aborted")
	fs.IntVar(&f.maxTxns, "max-transactions", tsemu.DefaultMaxTransactions, "most local transactions open at once")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return f, 0, false
		}
		return f, 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tablestore-emulator: unexpected arguments %q (a secret is never a flag: use $%s)\n", fs.Args(), envAccessKeySecret)
		return f, 2, false
	}
	return f, 0, true
}

// setup is what the server starts with, and where the banner says each
// part comes from.
type setup struct {
	opts                             tsemu.Options
	secretFrom, adminFrom, clockWhat string
	storage, metaWhere               string // set by start
}

// configure turns the flags and the environment into the server's options
// but for its Backend. An error is a usage error.
func configure(f *cmdFlags, getenv func(string) string) (*setup, error) {
	st := &setup{}
	secret, secretFrom, err := fromEnvOrFile(getenv(envAccessKeySecret), "$"+envAccessKeySecret, f.secretFile)
	if err != nil {
		return nil, err
	}
	if secret == "" {
		if !loopback(f.addr) {
			return nil, fmt.Errorf("refusing to serve %s with the public default secret: set $%s or -access-key-secret-file", f.addr, envAccessKeySecret)
		}
		secret, secretFrom = tsemu.DefaultAccessKeySecret, "the public default (loopback only)"
	}
	st.secretFrom = secretFrom
	if f.txnTimeout <= 0 || f.maxTxns <= 0 {
		return nil, errors.New("-transaction-timeout and -max-transactions must be positive")
	}
	st.opts = tsemu.Options{
		Addr: f.addr, InstanceName: f.instance, AccessKeyID: f.akID, AccessKeySecret: secret,
		MaxConns: f.maxConns, ReadTimeout: f.readTimeout, WriteTimeout: f.writeTimeout, IdleTimeout: f.idleTimeout,
		TransactionTimeout: f.txnTimeout, MaxTransactions: f.maxTxns,
	}
	if f.adminAddr != "" {
		st.opts.AdminAddr, st.opts.AdminAllowRemote = f.adminAddr, f.adminRemote
		st.opts.AdminToken, st.adminFrom, err = fromEnvOrFile(getenv(envAdminToken), "$"+envAdminToken, f.adminTokenFile)
		if err == nil && st.opts.AdminToken == "" {
			err = fmt.Errorf("-admin-addr needs a token: set $%s or -admin-token-file", envAdminToken)
		}
		if err != nil {
			return nil, err
		}
	}
	st.opts.Clock, st.clockWhat, err = serverClock(f.clock, time.Now)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// startServer opens the Backend the flags name and starts the server over it.
// On an error nothing is left open, and code is the exit code: 2 for a
// wrong backend URL, 1 for a failure to start.
func startServer(st *setup, f *cmdFlags) (srv *tsemu.Server, code int, err error) {
	backend, storage, err := openBackend(f.backendURL, f.dataDir)
	if err != nil {
		if errors.Is(err, tablekit.ErrInvalidArgument) {
			return nil, 2, err
		}
		return nil, 1, err
	}
	st.storage = storage
	st.opts.Backend = backend
	st.opts.MetaFile = f.metaFile
	if fe, ok := backend.(*fileengine.Engine); ok && st.opts.MetaFile == "" {
		st.opts.MetaFile = filepath.Join(fe.Dir(), metaFileName)
	}
	st.metaWhere = "in memory: lost at restart (-meta FILE keeps it)"
	if st.opts.MetaFile != "" {
		st.metaWhere = st.opts.MetaFile
	}
	srv, err = tsemu.NewServer(st.opts)
	if err != nil {
		backend.Close()
		return nil, 1, err
	}
	return srv, 0, nil
}

// banner prints the endpoint on stdout, and on stderr what is served and
// where each part of it comes from (never the secret).
func banner(stdout, stderr io.Writer, srv *tsemu.Server, st *setup, f *cmdFlags) {
	fmt.Fprintln(stdout, srv.Endpoint())
	fmt.Fprintf(stderr, "tablestore-emulator: serving the Tablestore API at %s\n", srv.Endpoint())
	fmt.Fprintf(stderr, "  instance:      %s\n", f.instance)
	fmt.Fprintf(stderr, "  access key id: %s (secret from %s)\n", f.akID, st.secretFrom)
	fmt.Fprintf(stderr, "  data:          %s\n", st.storage)
	fmt.Fprintf(stderr, "  table state:   %s\n", st.metaWhere)
	fmt.Fprintf(stderr, "  clock:         %s\n", st.clockWhat)
	if a := srv.AdminEndpoint(); a != "" {
		fmt.Fprintf(stderr, "  admin:         %s/admin/v1/ (token from %s)\n", a, st.adminFrom)
	} else {
		fmt.Fprintf(stderr, "  admin:         off (-admin-addr turns it on)\n")
	}
	fmt.Fprintf(stderr, "  stop with Ctrl-C or SIGTERM; requests in flight finish\n")
}

// serve waits for a signal on sig, then stops the server (letting
// requests in flight finish) and closes the Backend; it returns the exit
// code.
func serve(sig <-chan os.Signal, srv *tsemu.Server, backend tablekit.Backend, stderr io.Writer) int {
	s := <-sig
	start := time.Now()
	srv.Close()
	code := 0
	if err := backend.Close(); err != nil {
		fmt.Fprintln(stderr, "tablestore-emulator: closing the data:", err)
		code = 1
	}
	fmt.Fprintf(stderr, "tablestore-emulator: %v: stopped in %v\n", s, time.Since(start).Round(time.Millisecond))
	return code
}

// serverClock is the clock -clock names, and says what it is.
func serverClock(v string, now func() time.Time) (tablekit.Clock, string, error) {
	switch v {
	case "system", "":
		return tablekit.SystemClock{}, "system (the admin endpoint can offset it)", nil
	case "manual":
		t := now().UTC().Truncate(time.Millisecond)
		return tablekit.NewManualClock(t), "manual, frozen at " + t.Format(time.RFC3339Nano) + ": it moves only through the admin endpoint", nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, "", tablekit.Errorf(tablekit.ErrInvalidArgument, `-clock %q: want "system", "manual" or an RFC 3339 time`, v)
	}
	return tablekit.NewManualClock(t), "manual, frozen at " + t.UTC().Format(time.RFC3339Nano) + ": it moves only through the admin endpoint", nil
}

// openBackend opens the Backend that -backend or -data names (mem:// when
// neither) and describes where the data lives, without the URL's query
// (which may name endpoints, never credentials, but is kept out of logs
// all the same).
func openBackend(rawURL, dataDir string) (tablekit.Backend, string, error) {
	switch {
	case rawURL != "" && dataDir != "":
		return nil, "", tablekit.Errorf(tablekit.ErrInvalidArgument, "-backend and -data both given; -data DIR is -backend file://DIR, give one")
	case dataDir != "":
		e, err := fileengine.Open(dataDir, nil)
		if err != nil {
			return nil, "", err
		}
		return e, "durable in " + dataDir + " (every acknowledged write survives a restart or kill -9)", nil
	case rawURL == "":
		rawURL = "mem://"
	}
	b, err := tablekit.OpenBackend(context.Background(), rawURL)
	if err != nil {
		return nil, "", err
	}
	shown := "the backend"
	if u, perr := url.Parse(rawURL); perr == nil {
		shown = driver.ShowURL(u)
	}
	switch b.(type) {
	case *localengine.Engine:
		return b, "in memory: everything is lost when the program stops (-data DIR or -backend URL keeps it)", nil
	case *fileengine.Engine:
		return b, "durable in " + shown + " (every acknowledged write survives a restart or kill -9)", nil
	}
	return b, "in " + shown, nil
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
