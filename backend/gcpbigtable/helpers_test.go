package gcpbigtable_test

import (
	"context"
	"testing"

	"cloud.google.com/go/bigtable"
	"cloud.google.com/go/bigtable/bttest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
	"github.com/tablekit/tablekit/localengine"
)

// bigtableMaxMessage is the production service's request size limit
// (256 MiB). bttest's gRPC server would otherwise keep gRPC's 4 MiB default
// and refuse writes that Bigtable accepts (a SPEC-size write of almost 4 MiB
// plus framing).
const bigtableMaxMessage = 256 << 20

// newServer starts an in-process Bigtable emulator, closed when t ends.
func newServer(t testing.TB) *bttest.Server {
	t.Helper()
	srv, err := bttest.NewServer("localhost:0", grpc.MaxRecvMsgSize(bigtableMaxMessage), grpc.MaxSendMsgSize(bigtableMaxMessage))
	if err != nil {
		t.Fatalf("starting bttest: %v", err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// emulatorOptions connect a client to srv without credentials.
func emulatorOptions(srv *bttest.Server) []option.ClientOption {
	return []option.ClientOption{
		option.WithEndpoint(srv.Addr),
		option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
	}
}

// openBackend opens a Backend on srv with Open, closed when t ends.
func openBackend(t testing.TB, srv *bttest.Server, cfg gcpbigtable.Options) *gcpbigtable.Backend {
	t.Helper()
	cfg.Project, cfg.Instance = "proj", "inst"
	cfg.ClientConfig.MetricsProvider = bigtable.NoopMetricsProvider{}
	cfg.ClientOptions = emulatorOptions(srv)
	b, err := gcpbigtable.Open(context.Background(), &cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// rawTable returns the native handle of the Bigtable table that holds a
// tablekit table's rows now.
func rawTable(t testing.TB, b *gcpbigtable.Backend, name string) *bigtable.Table {
	t.Helper()
	tbl, err := b.Table(context.Background(), name)
	if err != nil {
		t.Fatalf("Backend.Table(%q): %v", name, err)
	}
	return tbl
}

// tableID returns the Bigtable table id of a tablekit table now.
func tableID(t testing.TB, db *tablekit.Client, name string) string {
	t.Helper()
	m, err := db.DescribeTable(context.Background(), name)
	if err != nil {
		t.Fatalf("DescribeTable(%q): %v", name, err)
	}
	return gcpbigtable.TableID(name, m.Incarnation)
}

// againstLocal returns a Client on the adapter over a new bttest (GC off,
// with extra client options) and one on the local engine, both reading
// clock, each with the table meta created and writes applied: the two
// sides of a test that compares the adapter's answers with the reference's.
func againstLocal(t testing.TB, clock tablekit.Clock, meta tablekit.TableMeta, writes []tablekit.BatchWrite, extra ...option.ClientOption) (bt, ref *tablekit.Client) {
	t.Helper()
	ctx := context.Background()
	cfg := gcpbigtable.Options{Project: "proj", Instance: "inst", GC: gcpbigtable.GCOff}
	cfg.ClientConfig.MetricsProvider = bigtable.NoopMetricsProvider{}
	cfg.ClientOptions = append(emulatorOptions(newServer(t)), extra...)
	be, err := gcpbigtable.Open(ctx, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	bt = tablekit.NewClient(be, tablekit.WithClock(clock))
	ref = tablekit.NewClient(localengine.New(), tablekit.WithClock(clock))
	t.Cleanup(func() { bt.Close(); ref.Close() })
	for _, db := range []*tablekit.Client{bt, ref} {
		if err := db.CreateTable(ctx, meta); err != nil {
			t.Fatal(err)
		}
		res, err := db.BatchWriteRow(ctx, writes)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
	return bt, ref
}
