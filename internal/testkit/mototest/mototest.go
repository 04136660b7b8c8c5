// Package mototest is for tablekit's own tests only: it runs moto's server
// (moto_server), a Python implementation of AWS APIs whose DynamoDB has
// TransactWriteItems, which dynalite lacks, as a local emulator.
//
// moto is a Python package; install it with
//
//	pip install 'moto[server]'
//
// mototest runs moto's server (what moto_server serves) with the Python
// that has moto: python3 from PATH, or the interpreter of moto_server's
// script. It serves in memory, bound to 127.0.0.1 on a free port, in a
// process group of its own that the cleanup kills whole, with the
// patches of moto 5.2.1's bugs listed at [Patch] (among them one request
// at a time, because moto isolates transactions only then); [Options]
// and [WithoutEnv] leave patches out. Clients use static credentials
// (any values), region [Region], and the endpoint as BaseEndpoint.
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
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
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

// Patch names one of the mends of moto 5.2.1 the harness applies. Each
// one is moto's bug, shown with the AWS SDK alone (no tablekit) by a test
// of this package (bugs_test.go) that fails once moto fixes it.
type Patch string

const (
	// PatchSerialize serves one request at a time. moto applies a
	// TransactWriteItems item by item and undoes a canceled one by
	// restoring a copy of each table taken when it began
	// (moto/dynamodb/models: transact_write_items), so with requests
	// running concurrently a canceled transaction erases what other
	// requests wrote meanwhile and a reader can see half a transaction:
	// DynamoDB isolates transactions, and so does moto once no two
	// requests overlap. Concurrent UpdateItem ADDs also answer one value
	// twice. Without it the conformance suite fails S13_AtomicWrite/
	// ConcurrentReader and Linearizable, and S14_AutoIncrement/
	// UniqueIncreasing16Writers (duplicate counter values).
	PatchSerialize Patch = "serialize"
	// PatchStreamDisable makes moto disable a DynamoDB stream as DynamoDB
	// does: the stream stops recording and stays readable (DISABLED, its
	// shard ending where its records end: GetRecords then answers no
	// NextShardIterator), and enabling again makes a new stream. moto
	// 5.2.1 instead keeps the disabled stream's shard, so that every later
	// write to the table fails with a 500 (KeyError 'StreamViewType' in
	// StreamShard.add), as does DescribeStream, and UpdateTable refuses to
	// enable a stream again (ResourceInUseException "Cannot enable
	// stream": latest_stream_label is never cleared); it serves one stream
	// per table, so a disabled one's records were gone. Without it the
	// suite fails S15_ChangeFeed/DisableEndsTheFeed.
	PatchStreamDisable Patch = "stream-disable"
	// PatchStreamBinary: moto sends Binary values of stream records (B,
	// BS) base64-encoded twice: its serializer encodes the base64 text it
	// stores (GetItem's are right), so they are decoded once first. (The
	// adapter also reads moto's doubly encoded records: see
	// backend/awsdynamodb's streamKey.) Before the adapter read them,
	// every record was dropped: 8 failures of moto as it shipped
	// (S15_ChangeFeed's EveryKindOfWrite, AtomicWrite,
	// PerRowOrder16Writers, ResumeFromEveryCheckpoint,
	// ReaderDuringWrites, Retention; S14_AutoIncrement/ChangeFeed;
	// Differential); now none.
	PatchStreamBinary Patch = "stream-binary"
	// PatchStreamUpdateInsert: an UpdateItem that creates an item makes
	// two INSERT records in moto, the first of an item holding only the
	// key (it puts that item, then updates it), the second of the whole
	// item with no old image: the put is not recorded. Without it the
	// first record, of an item that is no row (no revision), fails the
	// read: S15_ChangeFeed/EveryKindOfWrite and AtomicWrite, and
	// Differential.
	PatchStreamUpdateInsert Patch = "stream-update-insert"
)

// Patches lists every patch, in the order the harness applies them.
var Patches = []Patch{PatchSerialize, PatchStreamDisable, PatchStreamBinary, PatchStreamUpdateInsert}

// Options choose what Start and Launch serve.
type Options struct {
	// Without lists the patches not to apply; every other one is. All of
	// Patches: moto_server as it ships.
	Without []Patch
	// SwitchEvery, if not zero, is how often moto's Python switches
	// threads (sys.setswitchinterval; its default is 5 ms): a tiny one
	// makes its request threads interleave mid-call, so that the races
	// PatchSerialize closes show on a quiet machine too (bugs_test.go).
	SwitchEvery time.Duration
}

// WithoutEnv is the environment variable Launch and Start read when
// their Options are nil: a comma-separated list of patches to leave out,
// or "all" (moto as it ships). It lets a developer run the conformance
// suite on an unpatched moto, e.g.
//
//	TABLEKIT_MOTO_WITHOUT=all go test -run TestConformanceMoto ./backend/awsdynamodb
const WithoutEnv = "TABLEKIT_MOTO_WITHOUT"

// envOptions reads WithoutEnv.
func envOptions() (Options, error) {
	v := strings.TrimSpace(os.Getenv(WithoutEnv))
	if v == "" {
		return Options{}, nil
	}
	if v == "all" {
		return Options{Without: Patches}, nil
	}
	var o Options
	for _, name := range strings.Split(v, ",") {
		p := Patch(strings.TrimSpace(name))
		if !slices.Contains(Patches, p) {
			return o, fmt.Errorf("mototest: %s names %q, not a patch (want \"all\" or some of %v)", WithoutEnv, p, Patches)
		}
		o.Without = append(o.Without, p)
	}
	return o, nil
}

// program is the Python program that serves moto's server (the WSGI
// application moto_server serves, on werkzeug, threaded) with the patches
// o does not leave out.
func program(o Options) string {
	var b strings.Builder
	b.WriteString("import sys, threading, base64\n")
	if o.SwitchEvery > 0 {
		fmt.Fprintf(&b, "sys.setswitchinterval(%g)\n", o.SwitchEvery.Seconds())
	}
	on := func(p Patch) bool { return !slices.Contains(o.Without, p) }
	if on(PatchStreamDisable) {
		b.WriteString(streamDisableFix)
	}
	if on(PatchStreamBinary) {
		b.WriteString(streamBinaryFix)
	}
	if on(PatchStreamUpdateInsert) {
		b.WriteString(streamUpdateInsertFix)
	}
	b.WriteString(`
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
app = DomainDispatcherApplication(create_backend_app)
`)
	if on(PatchSerialize) {
		b.WriteString(`
lock = threading.Lock()
def serialized(environ, start_response, app=app):
    with lock:
        return list(app(environ, start_response))
app = serialized
`)
	}
	b.WriteString("run_simple(sys.argv[1], int(sys.argv[2]), app, threaded=True)\n")
	return b.String()
}

// streamDisableFix is PatchStreamDisable. Every other part of moto's
// DynamoDB Streams is moto's own: one shard per stream, no shard ends or
// splits, no trimming.
const streamDisableFix = `
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.table import Table
from moto.dynamodb.exceptions import StreamAlreadyEnabledException
from moto.dynamodbstreams import models as sm
_set = Table.set_stream_specification
def set_spec(self, streams):
    on = bool(streams and (streams.get("StreamEnabled") or streams.get("StreamViewType")))
    old = self.stream_shard
    if not on and old is not None:
        old.disabled, old.label = True, self.latest_stream_label
        old.view = self.stream_specification.get("StreamViewType")
        self.__dict__.setdefault("old_streams", {})[old.label] = old
        self.stream_shard, self.stream_specification = None, {"StreamEnabled": False}
        return
    _set(self, streams)
    if self.stream_shard is not None:
        self.stream_shard.label = self.latest_stream_label
Table.set_stream_specification = set_spec
def update_streams(self, table, spec):
    if (spec.get("StreamEnabled") or spec.get("StreamViewType")) and table.stream_shard is not None:
        raise StreamAlreadyEnabledException
    table.set_stream_specification(spec)
DynamoDBBackend.update_table_streams = update_streams
def shard_of(table, arn):
    label = arn.split("/stream/", 1)[1]
    if table.stream_shard is not None and label == table.latest_stream_label:
        return table.stream_shard
    return table.__dict__.get("old_streams", {})[label]
_describe = sm.DynamoDBStreamsBackend.describe_stream
def describe_stream(self, arn):
    table = self._get_table_from_arn(arn)
    shard = shard_of(table, arn)
    if not getattr(shard, "disabled", False):
        return _describe(self, arn)
    return {"StreamArn": arn, "StreamLabel": shard.label, "StreamStatus": "DISABLED",
            "StreamViewType": shard.view, "CreationRequestDateTime": shard.created_on,
            "TableName": table.name, "KeySchema": table.schema, "Shards": [shard.to_json()]}
sm.DynamoDBStreamsBackend.describe_stream = describe_stream
_list = sm.DynamoDBStreamsBackend.list_streams
def list_streams(self, table_name=None):
    out = []
    for table in self.dynamodb.tables.values():
        if table_name is not None and table.name != table_name:
            continue
        for label in table.__dict__.get("old_streams", {}):
            out.append({"StreamArn": table.table_arn + "/stream/" + label, "TableName": table.name, "StreamLabel": label})
    return out + [s for s in _list(self, table_name) if all(s["StreamArn"] != o["StreamArn"] for o in out)]
sm.DynamoDBStreamsBackend.list_streams = list_streams
def get_shard_iterator(self, arn, shard_id, shard_iterator_type, sequence_number=None):
    shard = shard_of(self._get_table_from_arn(arn), arn)
    it = sm.ShardIterator(self, shard, shard_iterator_type, sequence_number)
    self.shard_iterators[it.arn] = it
    return it
sm.DynamoDBStreamsBackend.get_shard_iterator = get_shard_iterator
_get_d = sm.ShardIterator.get
def get_d(self, limit=1000):
    out = _get_d(self, limit)
    shard = self.stream_shard
    if getattr(shard, "disabled", False) and not out["Records"] and self.sequence_number >= shard.starting_sequence_number + len(shard.items):
        out["NextShardIterator"] = None
    return out
sm.ShardIterator.get = get_d
`

// streamBinaryFix is PatchStreamBinary.
const streamBinaryFix = `
from moto.dynamodbstreams import models as sm
def raw(v):
    if isinstance(v, dict):
        return {k: (base64.b64decode(x) if k == "B" and isinstance(x, str) else
                    [base64.b64decode(y) for y in x] if k == "BS" else raw(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [raw(x) for x in v]
    return v
_get_b = sm.ShardIterator.get
def get_b(self, limit=1000):
    out = _get_b(self, limit)
    out["Records"] = [dict(r, dynamodb={k: raw(x) if k in ("Keys", "NewImage", "OldImage") else x for k, x in r["dynamodb"].items()}) for r in out["Records"]]
    return out
sm.ShardIterator.get = get_b
`

// streamUpdateInsertFix is PatchStreamUpdateInsert.
const streamUpdateInsertFix = `
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.table import Table
_tl = threading.local()
_put = Table.put_item
def put_item(self, *a, **k):
    if not getattr(_tl, "updating", False):
        return _put(self, *a, **k)
    shard, self.stream_shard = self.stream_shard, None
    try:
        return _put(self, *a, **k)
    finally:
        self.stream_shard = shard
Table.put_item = put_item
_update = DynamoDBBackend.update_item
def update_item(self, *a, **k):
    _tl.updating = True
    try:
        return _update(self, *a, **k)
    finally:
        _tl.updating = False
DynamoDBBackend.update_item = update_item
`

// command finds a Python that has moto's server: python3 on PATH, or the
// interpreter of moto_server's script (a pipx or virtualenv install).
func command() (string, error) {
	var tried []string
	var candidates []string
	if py, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, py)
	} else {
		tried = append(tried, "python3 is not in PATH")
	}
	if ms, err := exec.LookPath("moto_server"); err == nil {
		if py := shebang(ms); py != "" {
			candidates = append(candidates, py)
		}
	} else {
		tried = append(tried, "moto_server is not in PATH")
	}
	for _, py := range candidates {
		out, err := exec.Command(py, "-c", "import moto.server, werkzeug.serving").CombinedOutput()
		if err == nil {
			return py, nil
		}
		tried = append(tried, fmt.Sprintf("%s cannot import moto.server (%v: %.200s)", py, err, out))
	}
	return "", fmt.Errorf("%w: %s", ErrNotInstalled, strings.Join(tried, "; "))
}

// shebang returns the interpreter named on the first line of script when
// it is a Python, or "".
func shebang(script string) string {
	f, err := os.Open(script)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(io.LimitReader(f, 512)).ReadString('\n')
	if !strings.HasPrefix(line, "#!") {
		return ""
	}
	fields := strings.Fields(line[2:])
	if len(fields) == 0 || !strings.Contains(filepath.Base(fields[0]), "python") {
		return ""
	}
	return fields[0]
}

// spec is how moto is started with the Python py and options o.
func spec(py string, o Options) emuproc.Spec {
	prog := program(o)
	return emuproc.Spec{
		Name: "mototest: moto",
		Command: func(port int) *exec.Cmd {
			cmd := exec.Command(py, "-c", prog, "127.0.0.1", strconv.Itoa(port))
			cmd.Env = append(os.Environ(), "AWS_DEFAULT_REGION="+Region, "AWS_REGION="+Region, "MOTO_PORT="+strconv.Itoa(port))
			return cmd
		},
		// Werkzeug prints this once the socket is bound.
		Listening: regexp.MustCompile(`Running on https?://[^\s]*:(\d+)`),
		InUse:     "Address already in use",
		Region:    Region,
		Attempts:  5,
	}
}

func launch(o *Options) (*emuproc.Process, error) {
	if !emuproc.Supported {
		return nil, ErrUnsupported
	}
	if o == nil {
		eo, err := envOptions()
		if err != nil {
			return nil, err
		}
		o = &eo
	}
	py, err := command()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartupTimeout)
	defer cancel()
	return emuproc.Launch(ctx, spec(py, *o))
}

// Start launches an in-memory moto server for tb on a free 127.0.0.1 port
// and returns its endpoint ("http://127.0.0.1:<port>"), every patch
// applied but those WithoutEnv names. The server is killed with its
// process group when tb's cleanups run; its output is logged if tb fails.
// A missing moto skips tb, or fails it under CI=true.
func Start(tb testing.TB) (endpoint string) {
	tb.Helper()
	return StartWith(tb, nil)
}

// StartWith is Start with options o (nil: read WithoutEnv).
func StartWith(tb testing.TB, o *Options) (endpoint string) {
	tb.Helper()
	p, err := launch(o)
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

// Launch starts an in-memory moto server not tied to a test, for TestMain,
// every patch applied but those WithoutEnv names. stop kills it and
// waits for it to exit; it is safe to call more than once. If moto is not
// installed, err wraps ErrNotInstalled.
func Launch() (endpoint string, stop func(), err error) {
	return LaunchWith(nil)
}

// LaunchWith is Launch with options o (nil: read WithoutEnv).
func LaunchWith(o *Options) (endpoint string, stop func(), err error) {
	p, err := launch(o)
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
