// Package mototest is for tablekit's own tests only: it runs moto's server
// (moto_server), a Python implementation of AWS APIs whose DynamoDB has
// TransactWriteItems, which dynalite lacks, as a local emulator.
//
// moto is a Python package; install it with
//
//	pip install 'moto[server]'
//
// mototest runs moto_server from PATH, or else python3 -m moto.server,
// in memory, bound to 127.0.0.1 on a free port, in a process group of its
// own that the cleanup kills whole. Clients use static credentials (any
// values), region [Region], and the endpoint as BaseEndpoint.
//
// One server per test:
//
//	endpoint := mototest.Start(t)
//
// One server per package, from TestMain: [Launch], and [Missing] in the
// tests when it returned ErrNotInstalled (as with dynalitetest). A missing
// moto skips the test, or fails it when the CI environment variable is
// "true"; both messages name the install command.
package mototest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/testkit/emuproc"
)

const (
	// Region is the region clients should use.
	Region = "us-east-1"
	// InstallCommand installs moto's server.
	InstallCommand = "pip install 'moto[server]'"
)

// StartupTimeout bounds how long Start and Launch wait for moto to answer
// a ListTables call, port retries included (moto imports slowly).
var StartupTimeout = 60 * time.Second

// ErrNotInstalled is returned (wrapped) by Launch when neither moto_server
// nor python3 with the moto.server module can be found.
var ErrNotInstalled = errors.New("mototest: moto's server is not installed")

// ErrUnsupported is returned (wrapped) by Launch on platforms where the
// process handling is not implemented (non-Unix).
var ErrUnsupported = errors.New("mototest: not supported on " + runtime.GOOS)

// command finds moto's server: moto_server on PATH, or python3 -m
// moto.server when python3 can import it.
func command() ([]string, error) {
	if p, err := exec.LookPath("moto_server"); err == nil {
		return []string{p}, nil
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, fmt.Errorf("%w: neither moto_server nor python3 is in PATH", ErrNotInstalled)
	}
	if out, err := exec.Command(py, "-c", "import moto.server").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: moto_server is not in PATH and python3 cannot import moto.server (%v: %.200s)", ErrNotInstalled, err, out)
	}
	return []string{py, "-m", "moto.server"}, nil
}

// spec is how moto is started with argv.
func spec(argv []string) emuproc.Spec {
	return emuproc.Spec{
		Name: "mototest: moto",
		Command: func(port int) *exec.Cmd {
			args := append(argv[1:len(argv):len(argv)], "-H", "127.0.0.1", "-p", strconv.Itoa(port))
			cmd := exec.Command(argv[0], args...)
			cmd.Env = append(os.Environ(), "AWS_DEFAULT_REGION="+Region, "AWS_REGION="+Region)
			return cmd
		},
		// Werkzeug prints this once the socket is bound.
		Listening: regexp.MustCompile(`Running on https?://[^\s]*:(\d+)`),
		InUse:     "Address already in use",
		Region:    Region,
		Attempts:  5,
	}
}

func launch() (*emuproc.Process, error) {
	if !emuproc.Supported {
		return nil, ErrUnsupported
	}
	argv, err := command()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartupTimeout)
	defer cancel()
	return emuproc.Launch(ctx, spec(argv))
}

// Start launches an in-memory moto server for tb on a free 127.0.0.1 port
// and returns its endpoint ("http://127.0.0.1:<port>"). The server is
// killed with its process group when tb's cleanups run; its output is
// logged if tb fails. A missing moto skips tb, or fails it under CI=true.
func Start(tb testing.TB) (endpoint string) {
	tb.Helper()
	p, err := launch()
	switch {
	case errors.Is(err, ErrNotInstalled), errors.Is(err, ErrUnsupported):
		missing(tb, err)
		return ""
	case err != nil:
		tb.Fatal(err)
		return ""
	}
	p.Cleanup(tb, "mototest: moto")
	return p.Endpoint
}

// Launch starts an in-memory moto server not tied to a test, for TestMain.
// stop kills it and waits for it to exit; it is safe to call more than
// once. If moto is not installed, err wraps ErrNotInstalled.
func Launch() (endpoint string, stop func(), err error) {
	p, err := launch()
	if err != nil {
		return "", nil, err
	}
	return p.Endpoint, p.StopFunc("mototest: moto"), nil
}

// Missing reports that moto is not available: it fails tb when the CI
// environment variable is "true" and skips it otherwise, naming the
// install command in both cases.
func Missing(tb testing.TB) {
	tb.Helper()
	missing(tb, ErrNotInstalled)
}

func missing(tb testing.TB, err error) {
	tb.Helper()
	emuproc.Missing(tb, err, "`"+InstallCommand+"`")
}
