package main

import (
	"bufio"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// TestBinary builds the command, runs it on a free port, talks to it with
// the raw SDK and stops it with SIGTERM.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "tablestore-emulator")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-instance", "inst", "-access-key-id", "id", "-access-key-secret", "secret")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	exited := false
	defer func() {
		if !exited {
			cmd.Process.Kill()
			<-done
		}
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		done <- cmd.Wait()
	}()
	var endpoint string
	select {
	case endpoint = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatalf("no endpoint printed; stderr: %s", stderr.String())
	}
	if !strings.HasPrefix(endpoint, "http://127.0.0.1:") {
		t.Fatalf("endpoint %q", endpoint)
	}

	c := tablestore.NewClient(endpoint, "inst", "id", "secret")
	meta := &tablestore.TableMeta{TableName: "t"}
	meta.AddPrimaryKeyColumn("k", tablestore.PrimaryKeyType_STRING)
	if _, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 1), ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
		t.Fatal(err)
	}
	k := &tablestore.PrimaryKey{}
	k.AddPrimaryKeyColumn("k", "a")
	put := &tablestore.PutRowChange{TableName: "t", PrimaryKey: k}
	put.AddColumn("v", "hello")
	put.SetCondition(tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST)
	if _, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: put}); err != nil {
		t.Fatal(err)
	}
	g, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: k, MaxVersion: 1}})
	if err != nil || len(g.Columns) != 1 || g.Columns[0].Value != "hello" {
		t.Fatalf("GetRow = %+v, %v", g, err)
	}
	// Wrong credentials are refused.
	_, err = tablestore.NewClient(endpoint, "inst", "id", "nope").ListTable()
	var oe *tablestore.OtsError
	if !errors.As(err, &oe) || oe.Code != "OTSAuthFailed" {
		t.Fatalf("wrong secret: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		exited = true
		if err != nil {
			t.Fatalf("exit: %v; stderr: %s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("did not stop on SIGTERM")
	}
	if !strings.Contains(stderr.String(), "stopped") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func TestBadFlags(t *testing.T) {
	var out, errOut strings.Builder
	if code := run([]string{"-nope"}, &out, &errOut); code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
	if code := run([]string{"-addr", "256.0.0.1:1"}, &out, &errOut); code != 1 {
		t.Fatalf("exit code %d for a bad address, want 1", code)
	}
	if out.Len() != 0 {
		t.Fatalf("stdout %q", out.String())
	}
}
