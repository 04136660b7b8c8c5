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
