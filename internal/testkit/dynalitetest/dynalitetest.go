package dynalitetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/testkit/emuproc"
)

const (
	// Region is the region dynalite is told it runs in (it shows up in
	// table ARNs). Clients should use the same region.
	Region = "us-east-1"

	// AccountID is the account ID dynalite puts in table ARNs.
	AccountID = "000000000000"

	// InstallCommand installs dynalite; run it at the repository root.
	InstallCommand = "npm ci"
)

// StartupTimeout bounds how long Start and Launch wait for dynalite to
// answer a ListTables call, port retries included.
var StartupTimeout = 30 * time.Second

// ErrNotInstalled is returned (wrapped) by Launch when dynalite or Node.js
// cannot be found. Start turns it into a skip, or a failure when CI=true.
var ErrNotInstalled = errors.New("dynalitetest: dynalite is not installed")

// ErrUnsupported is returned (wrapped) by Launch on platforms where the
// process handling is not implemented (non-Unix).
var ErrUnsupported = errors.New("dynalitetest: not supported on " + runtime.GOOS)

// flags makes table status transitions instant so tests never sleep on
// CREATING/UPDATING/DELETING. No --path: dynalite stays in memory.
var flags = []string{
	"--createTableMs", "0",
	"--deleteTableMs", "0",
	"--updateTableMs", "0",
}

const maxPortAttempts = 5

var errPortInUse = emuproc.ErrPortInUse

// Start launches an in-memory dynalite for tb on a free 127.0.0.1 port and
// returns its endpoint ("http://127.0.0.1:<port>"), to be used as the AWS
// SDK's BaseEndpoint. The server is killed (with its whole process group)
// when tb's cleanups run. dynalite's output is logged if tb fails.
//
// If dynalite is not installed, Start skips tb, or fails it when the CI
// environment variable is "true"; both messages name the install command.
func Start(tb testing.TB) (endpoint string) {
	tb.Helper()
	s := startServer(tb)
	if s == nil { // only reachable with a testing.TB whose Skip/Fatal return
		return ""
	}
	return s.Endpoint
}

func startServer(tb testing.TB) *server {
	tb.Helper()
	s, err := launch()
	switch {
	case errors.Is(err, ErrNotInstalled):
		missing(tb, err)
		return nil
	case errors.Is(err, ErrUnsupported):
		missing(tb, err) // fails under CI=true like a missing install
		return nil
	case err != nil:
		tb.Fatal(err)
		return nil
	}
	s.Cleanup(tb, "dynalitetest: dynalite")
	return s
}

// Launch starts an in-memory dynalite not tied to a test, for use from
// TestMain so that one server serves a whole package. stop kills it and
// waits for it to exit; it is safe to call more than once. If dynalite is not
// installed, err wraps ErrNotInstalled; a startup failure's error includes
// dynalite's output.
func Launch() (endpoint string, stop func(), err error) {
	s, err := launch()
	if err != nil {
		return "", nil, err
	}
	return s.Endpoint, s.StopFunc("dynalitetest: dynalite"), nil
}

// Missing reports that dynalite is not available: it fails tb when the CI
// environment variable is "true" and skips it otherwise, naming the install
// command in both cases. Use it in tests that share a server started from
// TestMain with Launch, when Launch returned ErrNotInstalled.
func Missing(tb testing.TB) {
	tb.Helper()
	missing(tb, ErrNotInstalled)
}

func missing(tb testing.TB, err error) {
	tb.Helper()
	where := "the repository root"
	if root, rerr := repoRoot(); rerr == nil {
		where += " (" + root + ")"
	}
	emuproc.Missing(tb, err, fmt.Sprintf("`%s` at %s", InstallCommand, where))
}

// server is one running dynalite process.
type server = emuproc.Process

func launch() (*server, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	return launchIn(root)
}

func launchIn(root string) (*server, error) {
	if !emuproc.Supported {
		return nil, ErrUnsupported
	}
	bin := filepath.Join(root, "node_modules", ".bin", "dynalite")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotInstalled, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		return nil, fmt.Errorf("%w: node is not in PATH (dynalite needs Node.js >= 20): %v", ErrNotInstalled, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), StartupTimeout)
	defer cancel()
	return emuproc.Launch(ctx, spec(root, bin))
}

// spec is how dynalite is started from root.
func spec(root, bin string) emuproc.Spec {
	return emuproc.Spec{
		Name: "dynalitetest: dynalite",
		Command: func(port int) *exec.Cmd {
			args := append([]string{"--host", "127.0.0.1", "--port", strconv.Itoa(port)}, flags...)
			cmd := exec.Command(bin, args...)
			cmd.Dir = root
			// Later duplicates win in exec.Cmd.Env: pin the values dynalite puts
			// into ARNs, whatever the developer's environment says.
			cmd.Env = append(os.Environ(),
				"AWS_REGION="+Region,
				"AWS_DEFAULT_REGION="+Region,
				"AWS_ACCOUNT_ID="+AccountID,
			)
			return cmd
		},
		// dynalite prints this from its listen callback, i.e. once it owns
		// the port.
		Listening: listeningRE,
		InUse:     "EADDRINUSE",
		Region:    Region,
		Attempts:  maxPortAttempts,
	}
}

// freePort asks the kernel for a free loopback port; startOnce detects
// that another process took it meanwhile (EADDRINUSE) and launchIn retries.
func freePort() (int, error) {
	port, err := emuproc.FreePort()
	if err != nil {
		return 0, fmt.Errorf("dynalitetest: %w", err)
	}
	return port, nil
}

func startOnce(ctx context.Context, root, bin string, port int) (*server, error) {
	return emuproc.StartOn(ctx, spec(root, bin), port)
}

// listTables makes a DynamoDB ListTables call.
func listTables(ctx context.Context, endpoint string) error {
	return emuproc.ProbeDynamoDB(ctx, endpoint, Region)
}

// repoRoot is the nearest directory at or above the working directory (for
// tests: the package directory) that contains go.mod, preferring one that
// also holds node_modules (a nested module, such as ycsb/, uses the
// repository's install).
func repoRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			_, errMod := os.Stat(filepath.Join(d, "go.mod"))
			_, errNode := os.Stat(filepath.Join(d, "node_modules"))
			if errMod == nil && errNode == nil {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("dynalitetest: cannot find the repository root (no go.mod at or above the working directory)")
}

var listeningRE = regexp.MustCompile(`Dynalite listening at: https?://[^\s]*:(\d+)`)
