//go:build unix

package dynalitetest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// newClient builds a DynamoDB client for endpoint without reading the
// developer's AWS environment or shared config files.
func newClient(endpoint string) *dynamodb.Client {
	cfg := aws.Config{
		Region:      Region,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDDYNALITETEST", "dynalitetest-secret", ""),
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	})
}

func TestStartRoundTrip(t *testing.T) {
	var pid int
	var endpoint string
	t.Run("server", func(t *testing.T) {
		begin := time.Now()
		s := startServer(t)
		t.Logf("dynalite answered ListTables at %s after %v", s.Endpoint, time.Since(begin))
		pid, endpoint = s.Pid, s.Endpoint
		roundTrip(t, newClient(s.Endpoint))
	})
	if pid == 0 {
		t.Skip("dynalite did not start")
	}
	// The subtest's cleanups have run: nothing may be left behind.
	assertGone(t, pid, endpoint)
}

func roundTrip(t *testing.T, client *dynamodb.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const table = "roundtrip"

	created, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeN},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	wantARN := "arn:aws:dynamodb:" + Region + ":" + AccountID + ":table/" + table
	if got := aws.ToString(created.TableDescription.TableArn); got != wantARN {
		t.Errorf("TableArn = %q, want %q", got, wantARN)
	}

	// CreateTable answers CREATING even with --createTableMs 0; the table
	// turns ACTIVE on dynalite's next timer tick.
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 10 * time.Millisecond
		o.MaxDelay = 100 * time.Millisecond
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, 10*time.Second); err != nil {
		t.Fatalf("waiting for table: %v", err)
	}

	item := map[string]types.AttributeValue{
		"pk":   &types.AttributeValueMemberS{Value: "user#1"},
		"sk":   &types.AttributeValueMemberN{Value: "42"},
		"name": &types.AttributeValueMemberS{Value: "Ada"},
		"tags": &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"blob": &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 255}},
	}
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}); err != nil {
		t.Fatalf("PutItem: %v", err)
	}

	// The same conditional put must now fail with the proper error type.
	_, err = client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Errorf("second conditional PutItem: got %v, want ConditionalCheckFailedException", err)
	}

	got, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "user#1"},
			"sk": &types.AttributeValueMemberN{Value: "42"},
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	if len(got.Item) != len(item) {
		t.Fatalf("GetItem returned %d attributes, want %d: %#v", len(got.Item), len(item), got.Item)
	}
	if v, ok := got.Item["name"].(*types.AttributeValueMemberS); !ok || v.Value != "Ada" {
		t.Errorf("name = %#v, want S Ada", got.Item["name"])
	}
	if v, ok := got.Item["sk"].(*types.AttributeValueMemberN); !ok || v.Value != "42" {
		t.Errorf("sk = %#v, want N 42", got.Item["sk"])
	}
	if v, ok := got.Item["tags"].(*types.AttributeValueMemberSS); !ok || strings.Join(v.Value, ",") != "a,b" {
		t.Errorf("tags = %#v, want SS [a b]", got.Item["tags"])
	}
	if v, ok := got.Item["blob"].(*types.AttributeValueMemberB); !ok || string(v.Value) != "\x00\x01\x02\xff" {
		t.Errorf("blob = %#v, want B 00 01 02 ff", got.Item["blob"])
	}

	missing, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "user#2"},
			"sk": &types.AttributeValueMemberN{Value: "42"},
		},
	})
	if err != nil {
		t.Fatalf("GetItem (absent): %v", err)
	}
	if missing.Item != nil {
		t.Errorf("GetItem (absent) = %#v, want no item", missing.Item)
	}
}

func TestLaunch(t *testing.T) {
	endpoint, stop, err := Launch()
	if errors.Is(err, ErrNotInstalled) {
		Missing(t)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := listTables(context.Background(), endpoint); err != nil {
		stop()
		t.Fatalf("ListTables: %v", err)
	}
	stop()
	stop() // idempotent
	if conn, err := net.DialTimeout("tcp", strings.TrimPrefix(endpoint, "http://"), time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after stop", endpoint)
	}
}

// TestPortCollision checks that a port taken between freePort and dynalite's
// listen is reported as errPortInUse, which launchIn retries on.
func TestPortCollision(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "node_modules", ".bin", "dynalite")
	if _, err := os.Stat(bin); err != nil {
		Missing(t)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port

	ctx, cancel := context.WithTimeout(context.Background(), StartupTimeout)
	defer cancel()
	s, err := startOnce(ctx, root, bin, port)
	if err == nil {
		s.Stop()
		t.Fatalf("dynalite started on port %d, which was taken", port)
	}
	if !errors.Is(err, errPortInUse) {
		t.Fatalf("got %v, want errPortInUse", err)
	}
}

// fakeDynalite writes a shell script standing in for dynalite.
func fakeDynalite(t *testing.T, script string) (dir, bin string) {
	t.Helper()
	dir = t.TempDir()
	bin = filepath.Join(dir, "dynalite")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, bin
}

func TestStartupCrashShowsOutput(t *testing.T) {
	dir, bin := fakeDynalite(t, "echo 'Error: boom from fake dynalite' >&2\nexit 3\n")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	_, err = startOnce(context.Background(), dir, bin, port)
	if err == nil || errors.Is(err, errPortInUse) {
		t.Fatalf("got %v, want a startup failure", err)
	}
	for _, want := range []string{"boom from fake dynalite", "exit status 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// TestStartupTimeoutKillsGroup uses a fake that claims to listen but never
// answers, and leaves a child process (sleep) behind its shell: the timeout
// must kill both.
func TestStartupTimeoutKillsGroup(t *testing.T) {
	// Arguments are: --host 127.0.0.1 --port <port> ...
	dir, bin := fakeDynalite(t, "echo \"Dynalite listening at: http://127.0.0.1:$4\"\necho $$ > pid\nsleep 60\n")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err = startOnce(ctx, dir, bin, port)
	if err == nil || !strings.Contains(err.Error(), "ListTables still failing") {
		t.Fatalf("got %v, want a ListTables timeout", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("startOnce took %v to give up; the sleep child probably kept it waiting", d)
	}
	t.Logf("startOnce gave up after %v", time.Since(begin))
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	assertGone(t, pid, "http://127.0.0.1:"+strconv.Itoa(port))
}

func TestNotInstalled(t *testing.T) {
	_, err := launchIn(t.TempDir())
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("launchIn(empty dir) = %v, want ErrNotInstalled", err)
	}

	for _, tc := range []struct {
		ci       string
		wantFail bool
	}{
		{ci: "true", wantFail: true},
		{ci: "", wantFail: false},
		{ci: "1", wantFail: false}, // only CI=true counts
	} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			f := &fakeTB{TB: t}
			missing(f, err)
			msg := f.skipped
			if tc.wantFail {
				msg = f.failed
			}
			if msg == "" || (f.failed != "") != tc.wantFail {
				t.Fatalf("failed=%q skipped=%q; want failure=%v", f.failed, f.skipped, tc.wantFail)
			}
			if !strings.Contains(msg, "`npm ci`") {
				t.Errorf("message %q does not name the install command", msg)
			}
		})
	}
}

// fakeTB records Skip and Fatal instead of stopping the goroutine.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Skip(args ...any)  { f.skipped = fmt.Sprint(args...) }
func (f *fakeTB) Fatal(args ...any) { f.failed = fmt.Sprint(args...) }
func (f *fakeTB) Cleanup(fn func()) { f.TB.Cleanup(fn) }

// assertGone checks that the dynalite process, its process group and its
// port are all gone.
func assertGone(t *testing.T, pid int, endpoint string) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("dynalite pid %d still exists (kill 0: %v)", pid, err)
	}
	// Members other than the leader (which stop reaps itself) are killed
	// too but reaped by init, asynchronously: they may linger briefly as
	// zombies, which kill(2) still finds.
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := syscall.Kill(-pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("process group %d still has members (kill 0: %v)", pid, err)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	hostport := strings.TrimPrefix(endpoint, "http://")
	if conn, err := net.DialTimeout("tcp", hostport, time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after cleanup", endpoint)
	}
	if runtime.GOOS != "linux" {
		return
	}
	// No process anywhere still runs dynalite with this port.
	_, port, _ := net.SplitHostPort(hostport)
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		args := strings.Split(string(b), "\x00")
		if !strings.Contains(string(b), "dynalite") {
			continue
		}
		for i, a := range args {
			if a == "--port" && i+1 < len(args) && args[i+1] == port {
				t.Errorf("orphan dynalite process %s: %q", filepath.Base(filepath.Dir(p)), args)
			}
		}
	}
}
