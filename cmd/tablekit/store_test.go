package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A command that reads refuses a file:// directory that holds no store
// (a mistyped path), and makes none; create and import make one.
func TestFileURLMustNameAStore(t *testing.T) {
	t.Parallel()
	good := seededURL(t)
	dir := filepath.Join(t.TempDir(), "typo")
	missing := "file://" + dir + "?nosync=true"
	empty := t.TempDir() // exists, holds no store
	for _, url := range []string{missing, "file://" + empty} {
		for _, args := range [][]string{
			{"ls"}, {"describe", "t"}, {"scan", "t"}, {"count", "t"}, {"export", "t"},
			{"get", "t", "id=a,n=1,bin=0x"}, {"put", "t", "id=a,n=1,bin=0x"}, {"delete", "t", "id=a,n=1,bin=0x"},
			{"alter", "t", "--ttl", "-1"}, {"drop", "t", "--yes"},
		} {
			r := tk(t, url, "", args...)
			if r.code != 1 || !strings.Contains(r.stderr, "holds no tablekit store (is the path right?") {
				t.Errorf("tablekit %v on %s: %+v", args, url, r)
			}
		}
		// copy's source must hold a store; its destination may be new.
		if r := tk(t, "", "", "copy", url, fileURL(t)); r.code != 1 || !strings.Contains(r.stderr, "holds no tablekit store") {
			t.Errorf("copy from %s: %+v", url, r)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the reading commands made %s: %v", dir, err)
	}
	// (fileengine locks the directory before it looks: a LOCK file stays.)
	if ents, _ := os.ReadDir(empty); len(ents) > 1 || len(ents) == 1 && ents[0].Name() != "LOCK" {
		t.Fatalf("the reading commands wrote into %s: %v", empty, ents)
	}
	dst := "file://" + filepath.Join(t.TempDir(), "new") + "?nosync=true"
	if r := tk(t, "", "", "copy", good, dst); r.code != 0 {
		t.Fatalf("copy into a new store: %+v", r)
	}
	ok(t, missing, "create", "x", "--key", "id:String")
	if got := ok(t, missing, "ls"); got != "x\n" {
		t.Fatalf("ls after create: %q", got)
	}
	// file://HOST/PATH is refused, showing the absolute and relative forms.
	r := tk(t, "file://relative/dir", "", "ls")
	if r.code != 1 || !strings.Contains(r.stderr, "file:///relative/dir") || !strings.Contains(r.stderr, "file://./relative/dir") {
		t.Errorf("ls on file://relative/dir: %+v", r)
	}
	if _, err := os.Stat("relative"); !os.IsNotExist(err) {
		t.Errorf("file://relative/dir made ./relative: %v", err)
	}
}

// A checkpoint keeps and shows no secret of a URL: not a password
// parameter, not user information, not a fragment.
func TestCheckpointShowsNoSecret(t *testing.T) {
	t.Parallel()
	src := seededURL(t)
	cp := filepath.Join(t.TempDir(), "cp.json")
	ok(t, "", "copy", src, fileURL(t), "--checkpoint", cp)
	for _, dst := range []string{
		fileURL(t) + "&password=hunter2#frag-secret",
		strings.Replace(fileURL(t), "file://", "file://user:hunter2@", 1) + "#frag-secret",
	} {
		r := tk(t, "", "", "copy", src, dst, "--checkpoint", cp)
		if r.code != 1 || !strings.Contains(r.stderr, "belongs to the copy of") {
			t.Errorf("copy with another copy's checkpoint: %+v", r)
		}
		if strings.Contains(r.stderr, "hunter2") || strings.Contains(r.stderr, "frag-secret") {
			t.Errorf("the mismatch message shows a secret: %s", r.stderr)
		}
		// With a checkpoint of its own, the URL is refused and nothing kept.
		own := filepath.Join(t.TempDir(), "own.json")
		r = tk(t, "", "", "copy", src, dst, "--checkpoint", own)
		if r.code != 1 || strings.Contains(r.stderr, "hunter2") || strings.Contains(r.stderr, "frag-secret") {
			t.Errorf("copy to %s: %+v", dst, r)
		}
		if b, err := os.ReadFile(own); err == nil && (strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "frag-secret")) {
			t.Errorf("the checkpoint keeps a secret:\n%s", b)
		}
	}
	if got := redactURL("dynamodb://?region=us-east-1&endpoint=http://h:1&api_token=abc#x"); got != "dynamodb:?api_token=REDACTED&endpoint=http%3A%2F%2Fh%3A1&region=us-east-1" {
		t.Errorf("redactURL = %q", got)
	}
}
