package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit/tsemu"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds the command once per test run.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tablestore-emulator-test")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "tablestore-emulator")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// proc is a running emulator.
type proc struct {
	cmd      *exec.Cmd
	endpoint string
	stderr   *syncBuf
	done     chan error
	exited   bool
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs the binary with args and env and waits for its endpoint and
// the end of its banner.
func start(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: &syncBuf{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !p.exited {
			cmd.Process.Kill()
			<-p.done
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
		p.done <- cmd.Wait()
	}()
	select {
	case p.endpoint = <-lines:
	case <-time.After(60 * time.Second):
		t.Fatalf("no endpoint printed; stderr: %s", p.stderr.String())
	}
	if !strings.HasPrefix(p.endpoint, "http://127.0.0.1:") {
		t.Fatalf("endpoint %q; stderr: %s", p.endpoint, p.stderr.String())
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.stderr.String(), "stop with"); {
		if time.Now().After(deadline) {
			t.Fatalf("no banner: %s", p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return p
}

// stop sends sig and waits for the exit.
func (p *proc) stop(t *testing.T, sig os.Signal) error {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.exited = true
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("did not exit on %v", sig)
	}
	return nil
}

func createTable(t *testing.T, c *tablestore.TableStoreClient, name string) {
	t.Helper()
	meta := &tablestore.TableMeta{TableName: name}
	meta.AddPrimaryKeyColumn("k", tablestore.PrimaryKeyType_STRING)
	if _, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 1), ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
		t.Fatal(err)
	}
}

func key(s string) *tablestore.PrimaryKey {
	k := &tablestore.PrimaryKey{}
	k.AddPrimaryKeyColumn("k", s)
	return k
}

func put(c *tablestore.TableStoreClient, table, k, v string) error {
	ch := &tablestore.PutRowChange{TableName: table, PrimaryKey: key(k)}
	ch.AddColumn("v", v)
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	_, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
	return err
}

func get(t *testing.T, c *tablestore.TableStoreClient, table, k string) (string, bool) {
	t.Helper()
	g, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: table, PrimaryKey: key(k), MaxVersion: 1}})
	if err != nil {
		t.Fatalf("GetRow %s: %v", k, err)
	}
	if len(g.Columns) == 0 {
		return "", false
	}
	return g.Columns[0].Value.(string), true
}

// TestBinary builds the command, runs it on a free port with the secret
// in the environment, talks to it with the raw SDK and stops it with
// SIGTERM.
func TestBinary(t *testing.T) {
	p := start(t, []string{envAccessKeySecret + "=secret-in-env-5521"}, "-addr", "127.0.0.1:0", "-instance", "inst", "-access-key-id", "id")
	banner := p.stderr.String()
	for _, want := range []string{p.endpoint, "inst", "access key id: id", "in memory", "lost when the program stops", "admin:         off"} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
	if strings.Contains(banner, "secret-in-env-5521") {
		t.Errorf("banner shows the secret:\n%s", banner)
	}
	// The secret is not on the command line (ps shows that).
	if cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.cmd.Process.Pid)); err == nil && strings.Contains(string(cl), "secret-in-env-5521") {
		t.Errorf("the secret is on the command line: %q", cl)
	}

	c := tablestore.NewClient(p.endpoint, "inst", "id", "secret-in-env-5521")
	createTable(t, c, "t")
	if err := put(c, "t", "a", "hello"); err != nil {
		t.Fatal(err)
	}
	if v, ok := get(t, c, "t", "a"); !ok || v != "hello" {
		t.Fatalf("GetRow = %q, %v", v, ok)
	}
	// Wrong credentials are refused.
	_, err := tablestore.NewClient(p.endpoint, "inst", "id", "nope").ListTable()
	var oe *tablestore.OtsError
	if !errors.As(err, &oe) || oe.Code != "OTSAuthFailed" {
		t.Fatalf("wrong secret: %v", err)
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit: %v; stderr: %s", err, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "stopped") {
		t.Errorf("stderr: %s", p.stderr.String())
	}
}

// TestTransactionFlags: -max-transactions and -transaction-timeout reach
// the server.
func TestTransactionFlags(t *testing.T) {
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.RetryTimes = 0
	startTxn := func(c *tablestore.TableStoreClient, p string) (*string, error) {
		r, err := c.StartLocalTransaction(&tablestore.StartLocalTransactionRequest{TableName: "t", PrimaryKey: key(p)})
		if err != nil {
			return nil, err
		}
		return r.TransactionId, nil
	}
	code := func(err error) string {
		var oe *tablestore.OtsError
		if errors.As(err, &oe) {
			return oe.Code
		}
		return fmt.Sprint(err)
	}
	p := start(t, nil, "-addr", "127.0.0.1:0", "-max-transactions", "1")
	c := tablestore.NewClientWithConfig(p.endpoint, "tstest", "tstest-access-key-id", "tstest-access-key-secret", "", cfg)
	createTable(t, c, "t")
	if _, err := startTxn(c, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := startTxn(c, "b"); code(err) != "OTSQuotaExhausted" {
		t.Fatalf("a second transaction with -max-transactions 1: %v", err)
	}
	// Idle for more than a nanosecond is any time between two calls.
	p = start(t, nil, "-addr", "127.0.0.1:0", "-transaction-timeout", "1ns")
	c = tablestore.NewClientWithConfig(p.endpoint, "tstest", "tstest-access-key-id", "tstest-access-key-secret", "", cfg)
	createTable(t, c, "t")
	id, err := startTxn(c, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CommitTransaction(&tablestore.CommitTransactionRequest{TransactionId: id}); code(err) != "OTSSessionNotExist" {
		t.Fatalf("commit after -transaction-timeout 1ns: %v", err)
	}
}

// TestKill9KeepsAcknowledgedWrites is the probe "kill -9 after 88k
// acknowledged writes: a restart has nothing": with -data, every write the
// SDK saw acknowledged before SIGKILL reads back after a restart.
func TestKill9KeepsAcknowledgedWrites(t *testing.T) {
	dir := t.TempDir()
	env := []string{envAccessKeySecret + "=s"}
	p := start(t, env, "-addr", "127.0.0.1:0", "-data", dir)
	if !strings.Contains(p.stderr.String(), "durable in "+dir) {
		t.Errorf("banner does not say the data is durable: %s", p.stderr.String())
	}
	c := tablestore.NewClient(p.endpoint, "tstest", "tstest-access-key-id", "s")
	createTable(t, c, "t")
	// A table with what only the emulator keeps: reserved throughput,
	// a defined column, a global index.
	meta := &tablestore.TableMeta{TableName: "base"}
	meta.AddPrimaryKeyColumn("id", tablestore.PrimaryKeyType_STRING)
	meta.AddDefinedColumn("c", tablestore.DefinedColumn_STRING)
	if _, err := c.CreateTable(&tablestore.CreateTableRequest{
		TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 1),
		ReservedThroughput: &tablestore.ReservedThroughput{Readcap: 3, Writecap: 2},
		IndexMetas:         []*tablestore.IndexMeta{{IndexName: "by_c", Primarykey: []string{"c"}, IndexType: tablestore.IT_GLOBAL_INDEX}},
	}); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		acked = map[string]string{}
		stop  atomic.Bool
		wg    sync.WaitGroup
	)
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.RetryTimes = 0
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wc := tablestore.NewClientWithConfig(p.endpoint, "tstest", "tstest-access-key-id", "s", "", cfg)
			for i := 0; !stop.Load(); i++ {
				k, v := fmt.Sprintf("w%d-%06d", w, i), fmt.Sprintf("value %d of writer %d", i, w)
				if put(wc, "t", k, v) != nil {
					return // the server is gone
				}
				mu.Lock()
				acked[k] = v
				mu.Unlock()
			}
		}()
	}
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 400 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.stop(t, syscall.SIGKILL) // while the writers write
	stop.Store(true)
	wg.Wait()

	p2 := start(t, env, "-addr", "127.0.0.1:0", "-data", dir)
	c2 := tablestore.NewClient(p2.endpoint, "tstest", "tstest-access-key-id", "s")
	missing := 0
	for k, v := range acked {
		if got, ok := get(t, c2, "t", k); !ok || got != v {
			missing++
			if missing < 5 {
				t.Errorf("after kill -9: %s = %q, %v; acknowledged %q", k, got, ok, v)
			}
		}
	}
	t.Logf("%d acknowledged writes before kill -9; %d missing after the restart", len(acked), missing)
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged writes lost", missing, len(acked))
	}
	// The emulator's own table state came back too, and the index is
	// still kept in step.
	d, err := c2.DescribeTable(&tablestore.DescribeTableRequest{TableName: "base"})
	if err != nil {
		t.Fatal(err)
	}
	if d.ReservedThroughput.Readcap != 3 || d.ReservedThroughput.Writecap != 2 || len(d.IndexMetas) != 1 || d.IndexMetas[0].IndexName != "by_c" || len(d.TableMeta.DefinedColumns) != 1 {
		t.Fatalf("DescribeTable after the restart: throughput %+v, indexes %+v, defined %+v", d.ReservedThroughput, d.IndexMetas, d.TableMeta.DefinedColumns)
	}
	bput := &tablestore.PutRowChange{TableName: "base", PrimaryKey: func() *tablestore.PrimaryKey {
		k := &tablestore.PrimaryKey{}
		k.AddPrimaryKeyColumn("id", "r1")
		return k
	}()}
	bput.AddColumn("c", "indexed")
	bput.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := c2.PutRow(&tablestore.PutRowRequest{PutRowChange: bput}); err != nil {
		t.Fatal(err)
	}
	ik := &tablestore.PrimaryKey{}
	ik.AddPrimaryKeyColumn("c", "indexed")
	ik.AddPrimaryKeyColumn("id", "r1")
	g, err := c2.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "by_c", PrimaryKey: ik, MaxVersion: 1}})
	if err != nil || g.PrimaryKey.PrimaryKeys == nil {
		t.Fatalf("index row after the restart: %+v, %v", g, err)
	}
	if err := p2.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit: %v; stderr: %s", err, p2.stderr.String())
	}
}

// TestAdminFromOutside drives the binary's admin endpoint over plain HTTP,
// as a Node or Java test would with curl-like calls.
func TestAdminFromOutside(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("tok-9-long-enough-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, []string{envAccessKeySecret + "=s"}, "-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0", "-admin-token-file", tokenFile)
	banner := p.stderr.String()
	i := strings.Index(banner, "admin:         http://")
	if i < 0 || strings.Contains(banner, "tok-9-long-enough-token") {
		t.Fatalf("banner: %s", banner)
	}
	admin := strings.Fields(banner[i+len("admin:"):])[0]
	admin = strings.TrimSuffix(admin, "/admin/v1/")
	c := tablestore.NewClient(p.endpoint, "tstest", "tstest-access-key-id", "s")
	createTable(t, c, "t")
	req, _ := http.NewRequest("POST", admin+"/admin/v1/faults", strings.NewReader(`{"operation":"ListTable","code":"OTSServerUnavailable","rate":1}`))
	req.Header.Set("Authorization", "Bearer tok-9-long-enough-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("set fault: %d", resp.StatusCode)
	}
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.RetryTimes = 0
	_, err = tablestore.NewClientWithConfig(p.endpoint, "tstest", "tstest-access-key-id", "s", "", cfg).ListTable()
	var oe *tablestore.OtsError
	if !errors.As(err, &oe) || oe.Code != "OTSServerUnavailable" {
		t.Fatalf("ListTable with a fault: %v", err)
	}
	req, _ = http.NewRequest("POST", admin+"/admin/v1/reset", nil)
	req.Header.Set("Authorization", "Bearer tok-9-long-enough-token")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"tables_deleted":1`) {
		t.Fatalf("reset: %d %s", resp.StatusCode, b)
	}
}

func TestUsage(t *testing.T) {
	var out, errOut strings.Builder
	if code := run([]string{"--help"}, noEnv, &out, &errOut, nil); code != 0 {
		t.Fatalf("--help: exit code %d", code)
	}
	help := errOut.String()
	for _, want := range []string{"-data", "-backend", "-meta", "-clock", "file://", "dynamodb://", "bigtable://", "-admin-addr", envAccessKeySecret, envAdminToken, "in memory", "-access-key-secret-file"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "-access-key-secret ") || strings.Contains(help, "-access-key-secret\n") {
		t.Errorf("--help offers the secret as a flag:\n%s", help)
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q", out.String())
	}
}

func noEnv(string) string { return "" }

func TestBadFlags(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	os.WriteFile(secretFile, []byte("x\n"), 0o600)
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		code int
		msg  string
	}{
		{"UnknownFlag", []string{"-nope"}, nil, 2, "flag provided but not defined"},
		{"SecretFlag", []string{"-access-key-secret", "x"}, nil, 2, "flag provided but not defined"},
		{"BadAddr", []string{"-addr", "256.0.0.1:1"}, map[string]string{envAccessKeySecret: "y"}, 1, "listen"},
		{"DefaultSecretInPublic", []string{"-addr", "0.0.0.0:0"}, nil, 2, "refusing"},
		{"SecretTwice", []string{"-access-key-secret-file", secretFile}, map[string]string{envAccessKeySecret: "y"}, 2, "give one"},
		{"NoSecretFile", []string{"-access-key-secret-file", filepath.Join(dir, "none")}, nil, 2, "no such file"},
		{"AdminWithoutToken", []string{"-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0"}, nil, 2, "needs a token"},
		{"AdminShortToken", []string{"-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0"}, map[string]string{envAdminToken: "short-token"}, 1, "at least 16"},
		{"AdminNotLoopback", []string{"-addr", "127.0.0.1:0", "-admin-addr", "0.0.0.0:0"}, map[string]string{envAdminToken: "a-token-of-enough-length"}, 1, "not a loopback address"},
		{"Args", []string{"secret"}, nil, 2, "unexpected arguments"},
		{"BadClock", []string{"-clock", "yesterday"}, nil, 2, "RFC 3339"},
		{"ZeroTransactionTimeout", []string{"-transaction-timeout", "0s"}, nil, 2, "must be positive"},
		{"NoTransactions", []string{"-max-transactions", "0"}, nil, 2, "must be positive"},
		{"BackendAndData", []string{"-backend", "mem://", "-data", dir}, nil, 2, "give one"},
		{"UnknownScheme", []string{"-backend", "nope://x"}, nil, 2, `no opener for scheme "nope"`},
		{"NoScheme", []string{"-backend", dir}, nil, 2, "no scheme"},
		{"CredentialInURL", []string{"-backend", "dynamodb://?region=us-east-1&secret_key=pw-3361"}, nil, 2, "dynamodb://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut strings.Builder
			if code := run(tc.args, env(tc.env), &out, &errOut, nil); code != tc.code {
				t.Fatalf("exit code %d, want %d; stderr %s", code, tc.code, errOut.String())
			}
			if !strings.Contains(errOut.String(), tc.msg) {
				t.Errorf("stderr %q lacks %q", errOut.String(), tc.msg)
			}
			if strings.Contains(errOut.String(), "pw-3361") {
				t.Errorf("stderr shows the credential: %q", errOut.String())
			}
			if out.Len() != 0 {
				t.Fatalf("stdout %q", out.String())
			}
		})
	}
}

// TestSecretFromFile runs in process: the secret file's content (without
// its newline) is the secret, and SIGTERM on the channel stops the server.
func TestSecretFromFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(f, []byte("file-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	sig := make(chan os.Signal, 1)
	var errOut syncBuf
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"-addr", "127.0.0.1:0", "-access-key-secret-file", f}, noEnv, pw, &errOut, sig)
		pw.Close()
	}()
	endpoint, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	c := tablestore.NewClient(strings.TrimSpace(endpoint), "tstest", "tstest-access-key-id", "file-secret")
	if _, err := c.ListTable(); err != nil {
		t.Fatalf("ListTable with the file's secret: %v", err)
	}
	sig <- syscall.SIGTERM
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "secret from file "+f) {
		t.Errorf("banner: %s", errOut.String())
	}
}

// TestBackendURL: -backend file://DIR keeps rows and the table state
// tablekit does not model (here reserved throughput, in DIR's meta file),
// and -data DIR is the same store; -backend mem:// with -meta FILE keeps
// the table state in FILE.
func TestBackendURL(t *testing.T) {
	const secret = "backend-url-secret-18"
	env := []string{envAccessKeySecret + "=" + secret}
	dir := t.TempDir()
	p := start(t, env, "-addr", "127.0.0.1:0", "-backend", "file://"+filepath.ToSlash(dir))
	if banner := p.stderr.String(); !strings.Contains(banner, "durable in file://"+filepath.ToSlash(dir)) || !strings.Contains(banner, filepath.Join(dir, metaFileName)) {
		t.Errorf("banner does not say where the data and the table state are:\n%s", banner)
	}
	c := tablestore.NewClient(p.endpoint, tsemu.DefaultInstanceName, tsemu.DefaultAccessKeyID, secret)
	meta := &tablestore.TableMeta{TableName: "t"}
	meta.AddPrimaryKeyColumn("k", tablestore.PrimaryKeyType_STRING)
	if _, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 1),
		ReservedThroughput: &tablestore.ReservedThroughput{Readcap: 7, Writecap: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := put(c, "t", "a", "kept"); err != nil {
		t.Fatal(err)
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit: %v; stderr: %s", err, p.stderr.String())
	}

	p2 := start(t, env, "-addr", "127.0.0.1:0", "-data", dir)
	c = tablestore.NewClient(p2.endpoint, tsemu.DefaultInstanceName, tsemu.DefaultAccessKeyID, secret)
	if v, ok := get(t, c, "t", "a"); !ok || v != "kept" {
		t.Fatalf("after a restart with -data: GetRow = %q, %v", v, ok)
	}
	d, err := c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if d.ReservedThroughput.Readcap != 7 || d.ReservedThroughput.Writecap != 3 {
		t.Errorf("reserved throughput after a restart = %+v, want 7/3", d.ReservedThroughput)
	}
	if err := p2.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	// Over mem://, -meta keeps the table state in the file named.
	metaFile := filepath.Join(t.TempDir(), "state.json")
	p3 := start(t, env, "-addr", "127.0.0.1:0", "-backend", "mem://", "-meta", metaFile)
	c = tablestore.NewClient(p3.endpoint, tsemu.DefaultInstanceName, tsemu.DefaultAccessKeyID, secret)
	if _, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 1),
		ReservedThroughput: &tablestore.ReservedThroughput{Readcap: 5}}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(metaFile); err != nil || !strings.Contains(string(b), `"read_cu": 5`) {
		t.Errorf("-meta file after CreateTable: %q, %v", b, err)
	}
	if err := p3.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

func TestServerClock(t *testing.T) {
	now := func() time.Time { return time.Date(2031, 5, 6, 7, 8, 9, 123456789, time.UTC) }
	c, what, err := serverClock("manual", now)
	if err != nil || !c.Now().Equal(time.Date(2031, 5, 6, 7, 8, 9, 123000000, time.UTC)) || !strings.Contains(what, "frozen") {
		t.Errorf("manual: %v, %q, %v", c.Now(), what, err)
	}
	if c, _, err := serverClock("2030-01-01T00:00:00Z", now); err != nil || !c.Now().Equal(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("RFC 3339: %v, %v", c, err)
	}
	if c, what, err := serverClock("system", now); err != nil || c.Now().Year() == 2031 || !strings.Contains(what, "system") {
		t.Errorf("system: %v, %q, %v", c, what, err)
	}
}
