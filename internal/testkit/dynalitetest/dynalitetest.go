package dynalitetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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

const (
	maxPortAttempts = 5
	waitDelay       = 2 * time.Second
	outputLimit     = 1 << 20
)

var errPortInUse = errors.New("port already in use")

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
	return s.endpoint
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
	tb.Cleanup(func() {
		if s.stop() {
			tb.Errorf("dynalitetest: dynalite at %s exited while the test was running (%v); output:\n%s",
				s.endpoint, s.waitErr, s.out.String())
			return
		}
		if tb.Failed() {
			tb.Logf("dynalite output (%s):\n%s", s.endpoint, s.out.String())
		}
	})
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
	return s.endpoint, func() {
		if s.stop() {
			fmt.Fprintf(os.Stderr, "dynalitetest: dynalite at %s had exited before stop (%v); output:\n%s",
				s.endpoint, s.waitErr, s.out.String())
		}
	}, nil
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
	msg := fmt.Sprintf("%v; install it by running `%s` at %s", err, InstallCommand, where)
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	} else {
		tb.Skip(msg)
	}
}

// server is one running dynalite process.
type server struct {
	endpoint string
	pid      int
	out      *logBuffer

	done    chan struct{} // closed once the process has been waited for
	waitErr error         // valid after done is closed

	stopOnce    sync.Once
	exitedEarly bool
}

func launch() (*server, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	return launchIn(root)
}

func launchIn(root string) (*server, error) {
	if !supported {
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
	var err error
	for range maxPortAttempts {
		var port int
		port, err = freePort()
		if err != nil {
			return nil, err
		}
		var s *server
		s, err = startOnce(ctx, root, bin, port)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errPortInUse) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("dynalitetest: giving up after %d port collisions: %w", maxPortAttempts, err)
}

// freePort asks the kernel for a free loopback port. It is closed again
// before dynalite binds it, so another process may take it in between;
// startOnce detects that (EADDRINUSE) and launchIn retries.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("dynalitetest: finding a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("dynalitetest: finding a free port: %w", err)
	}
	return port, nil
}

func startOnce(ctx context.Context, root, bin string, port int) (*server, error) {
	out := &logBuffer{limit: outputLimit}
	listening := &listenWatcher{out: out, port: make(chan int, 1)}

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
	cmd.Stdout = listening
	cmd.Stderr = out
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("dynalitetest: starting %s: %w", bin, err)
	}
	s := &server{
		endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		pid:      cmd.Process.Pid,
		out:      out,
		done:     make(chan struct{}),
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()

	fail := func(format string, a ...any) (*server, error) {
		s.stop()
		return nil, fmt.Errorf("dynalitetest: dynalite on port %d: %s; output:\n%s",
			port, fmt.Sprintf(format, a...), out.String())
	}

	// dynalite prints "Dynalite listening at: http://127.0.0.1:<port>"
	// from its listen callback, i.e. once it owns the port. Waiting for it
	// (rather than only probing) guarantees we are not talking to some
	// other process that grabbed the port after freePort released it.
	select {
	case got := <-listening.port:
		if got != port {
			return fail("listening on port %d instead", got)
		}
	case <-s.done:
		if strings.Contains(out.String(), "EADDRINUSE") {
			s.stop()
			return nil, fmt.Errorf("dynalitetest: port %d: %w", port, errPortInUse)
		}
		return fail("exited during startup (%v)", s.waitErr)
	case <-ctx.Done():
		return fail("not listening after %v", StartupTimeout)
	}

	// Then make sure the API itself answers.
	var perr error
	for {
		if perr = listTables(ctx, s.endpoint); perr == nil {
			return s, nil
		}
		select {
		case <-s.done:
			return fail("exited during startup (%v)", s.waitErr)
		case <-ctx.Done():
			return fail("ListTables still failing after %v: %v", StartupTimeout, perr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop kills the process group and waits for dynalite to exit. It reports
// whether dynalite had already exited on its own before stop was called.
// dynalite is in-memory, so there is nothing to shut down gracefully:
// SIGKILL is immediate and cannot be ignored.
func (s *server) stop() (exitedEarly bool) {
	s.stopOnce.Do(func() {
		select {
		case <-s.done:
			s.exitedEarly = true
			return
		default:
		}
		killGroup(s.pid)
		<-s.done
	})
	return s.exitedEarly
}

// probeClient talks to dynalite without proxies or kept-alive connections.
var probeClient = &http.Client{
	Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
	Timeout:   5 * time.Second,
}

// listTables makes a DynamoDB ListTables call. dynalite requires the shape
// of a SigV4 Authorization header but does not verify the signature.
func listTables(ctx context.Context, endpoint string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"/", strings.NewReader("{}"))
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	req.Header.Set("X-Amz-Date", now.Format("20060102T150405Z"))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=dynalitetest/"+now.Format("20060102")+
		"/"+Region+"/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0")
	resp, err := probeClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("ListTables: HTTP %d: %s", resp.StatusCode, body)
	}
	var out struct {
		TableNames *[]string
	}
	if err := json.Unmarshal(body, &out); err != nil || out.TableNames == nil {
		return fmt.Errorf("ListTables: unexpected response: %s", body)
	}
	return nil
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

// logBuffer collects dynalite's output, keeping the last limit bytes.
type logBuffer struct {
	mu        sync.Mutex
	buf       []byte
	limit     int
	truncated bool
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.truncated = true
	}
	return len(p), nil
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.truncated {
		return "[earlier output truncated]\n" + string(b.buf)
	}
	return string(b.buf)
}

var listeningRE = regexp.MustCompile(`Dynalite listening at: https?://[^\s]*:(\d+)`)

// listenWatcher copies dynalite's stdout into out and reports the port of
// the first "Dynalite listening at" line.
type listenWatcher struct {
	out  *logBuffer
	port chan int // buffered, receives at most one value

	line  []byte // written by exec's copying goroutine only
	found bool
}

func (w *listenWatcher) Write(p []byte) (int, error) {
	w.out.Write(p)
	if w.found {
		return len(p), nil
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			break
		}
		if m := listeningRE.FindSubmatch(w.line[:i]); m != nil {
			if port, err := strconv.Atoi(string(m[1])); err == nil {
				w.found = true
				w.line = nil
				w.port <- port
				break
			}
		}
		w.line = w.line[i+1:]
	}
	if len(w.line) > 4096 { // no newline in sight; don't grow forever
		w.line = w.line[len(w.line)-4096:]
	}
	return len(p), nil
}
