// Package emuproc is for tablekit's own tests only: what the test kit's
// emulator harnesses (dynalitetest, mototest) share to run a server process
// for a test. It finds a free loopback port, starts the process in its own
// process group (killed whole, and on Linux killed by the kernel if the test
// binary dies first), keeps the tail of its output, watches that output
// for the line that says it listens, probes a DynamoDB endpoint, and
// reports a missing install as a skip, or as a failure under CI=true.
package emuproc

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
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	waitDelay   = 2 * time.Second
	outputLimit = 1 << 20
)

// Supported reports whether processes can be run and killed as a group
// here (Unix).
const Supported = supported

// FreePort asks the kernel for a free loopback port. It is closed again
// before the server binds it, so another process may take it in between:
// a harness detects that from the server's output and tries another port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	return port, nil
}

// Process is one running server.
type Process struct {
	Endpoint string // "http://127.0.0.1:<port>"
	Pid      int
	Out      *LogBuffer // the tail of its output

	done    chan struct{} // closed once the process has been waited for
	waitErr error         // valid after done is closed

	stopOnce    sync.Once
	exitedEarly bool
}

// Start starts cmd (whose Stdout and Stderr the caller has set, usually
// to out or a [PortWatcher] over it) in a process group of its own.
func Start(cmd *exec.Cmd, endpoint string, out *LogBuffer) (*Process, error) {
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	p := &Process{Endpoint: endpoint, Pid: cmd.Process.Pid, Out: out, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// WaitErr is how the process exited; valid once Done is closed.
func (p *Process) WaitErr() error { return p.waitErr }

// Stop kills the process group and waits for the process to exit. It
// reports whether the process had already exited on its own before Stop
// was called. The servers are in-memory, so there is nothing to shut down
// gracefully: SIGKILL is immediate and cannot be ignored. It is safe to
// call more than once.
func (p *Process) Stop() (exitedEarly bool) {
	p.stopOnce.Do(func() {
		select {
		case <-p.done:
			p.exitedEarly = true
			return
		default:
		}
		killGroup(p.Pid)
		<-p.done
	})
	return p.exitedEarly
}

// Cleanup stops p when tb's cleanups run, failing tb if p had exited
// while the test was running, and logs p's output if tb failed.
func (p *Process) Cleanup(tb testing.TB, name string) {
	tb.Cleanup(func() {
		if p.Stop() {
			tb.Errorf("%s at %s exited while the test was running (%v); output:\n%s",
				name, p.Endpoint, p.waitErr, p.Out.String())
			return
		}
		if tb.Failed() {
			tb.Logf("%s output (%s):\n%s", name, p.Endpoint, p.Out.String())
		}
	})
}

// StopFunc is p.Stop for a server started from TestMain: it reports on
// stderr when the server had exited early.
func (p *Process) StopFunc(name string) func() {
	return func() {
		if p.Stop() {
			fmt.Fprintf(os.Stderr, "%s at %s had exited before stop (%v); output:\n%s",
				name, p.Endpoint, p.waitErr, p.Out.String())
		}
	}
}

// Missing reports that a tool is not installed: it fails tb when the CI
// environment variable is "true" and skips it otherwise; both messages
// carry err and how to install it.
func Missing(tb testing.TB, err error, install string) {
	tb.Helper()
	msg := fmt.Sprintf("%v; install it with %s", err, install)
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	} else {
		tb.Skip(msg)
	}
}

// probeClient talks to a server without proxies or kept-alive connections.
var probeClient = &http.Client{
	Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
	Timeout:   5 * time.Second,
}

// ProbeDynamoDB makes a DynamoDB ListTables call on endpoint. The
// emulators require the shape of a SigV4 Authorization header but do not
// verify the signature.
func ProbeDynamoDB(ctx context.Context, endpoint, region string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"/", strings.NewReader("{}"))
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	req.Header.Set("X-Amz-Date", now.Format("20060102T150405Z"))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=emuproc/"+now.Format("20060102")+
		"/"+region+"/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0")
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

// Spec describes a DynamoDB emulator to start.
type Spec struct {
	// Name prefixes errors, e.g. "dynalitetest: dynalite".
	Name string
	// Command returns the command that serves on 127.0.0.1:port; StartOn
	// sets its Stdout, Stderr and process attributes.
	Command func(port int) *exec.Cmd
	// Listening matches the output line the server prints once it owns
	// its port, the port in its first group. Waiting for it (rather than
	// only probing) guarantees we are not talking to some other process
	// that grabbed the port after FreePort released it.
	Listening *regexp.Regexp
	// InUse is what the output says when the port is taken.
	InUse string
	// Region is the region the ListTables probe signs for.
	Region string
	// Attempts bounds how many ports Launch tries.
	Attempts int
}

// Launch starts spec's server on a free port, trying another port when
// the one it got was taken meanwhile, until ctx ends.
func Launch(ctx context.Context, spec Spec) (*Process, error) {
	var err error
	for range max(spec.Attempts, 1) {
		var port int
		port, err = FreePort()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", spec.Name, err)
		}
		var p *Process
		p, err = StartOn(ctx, spec, port)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, ErrPortInUse) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: giving up after %d port collisions: %w", spec.Name, spec.Attempts, err)
}

// StartOn starts spec's server on port and waits until it prints that it
// listens there and answers a DynamoDB ListTables call, or exits, or ctx
// ends; on failure it kills the server, and the error carries its output
// (or wraps ErrPortInUse).
func StartOn(ctx context.Context, spec Spec, port int) (*Process, error) {
	out := &LogBuffer{}
	listening := NewPortWatcher(out, spec.Listening)
	cmd := spec.Command(port)
	cmd.Stdout, cmd.Stderr = listening, listening
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	p, err := Start(cmd, endpoint, out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Name, err)
	}
	fail := func(format string, a ...any) (*Process, error) {
		p.Stop()
		return nil, fmt.Errorf("%s on port %d: %s; output:\n%s", spec.Name, port, fmt.Sprintf(format, a...), out.String())
	}
	select {
	case got := <-listening.Port():
		if got != port {
			return fail("listening on port %d instead", got)
		}
	case <-p.done:
		if strings.Contains(out.String(), spec.InUse) {
			p.Stop()
			return nil, fmt.Errorf("%s: port %d: %w", spec.Name, port, ErrPortInUse)
		}
		return fail("exited during startup (%v)", p.waitErr)
	case <-ctx.Done():
		return fail("not listening before the startup timeout")
	}
	// Then make sure the API itself answers.
	for {
		perr := ProbeDynamoDB(ctx, endpoint, spec.Region)
		if perr == nil {
			return p, nil
		}
		select {
		case <-p.done:
			return fail("exited during startup (%v)", p.waitErr)
		case <-ctx.Done():
			return fail("ListTables still failing after the startup timeout: %v", perr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// LogBuffer collects a process's output, keeping the last bytes of it.
type LogBuffer struct {
	mu        sync.Mutex
	buf       []byte
	truncated bool
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - outputLimit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.truncated = true
	}
	return len(p), nil
}

func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.truncated {
		return "[earlier output truncated]\n" + string(b.buf)
	}
	return string(b.buf)
}

// PortWatcher copies a process's output into Out and sends on Port the
// port of the first line that RE matches (its first group). Give the same
// *PortWatcher as Stdout and Stderr, or give it one of them only: exec
// then calls Write from one goroutine at a time.
type PortWatcher struct {
	Out  *LogBuffer
	RE   *regexp.Regexp
	port chan int // buffered, receives at most one value

	line  []byte
	found bool
}

// NewPortWatcher returns a PortWatcher of out for re.
func NewPortWatcher(out *LogBuffer, re *regexp.Regexp) *PortWatcher {
	return &PortWatcher{Out: out, RE: re, port: make(chan int, 1)}
}

// Port receives the port once the line has been seen.
func (w *PortWatcher) Port() <-chan int { return w.port }

func (w *PortWatcher) Write(p []byte) (int, error) {
	w.Out.Write(p)
	if w.found {
		return len(p), nil
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			break
		}
		if m := w.RE.FindSubmatch(w.line[:i]); m != nil {
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

// ErrPortInUse is what a harness returns (wrapped) when the server could
// not bind the port it was given; it then tries another.
var ErrPortInUse = errors.New("port already in use")
