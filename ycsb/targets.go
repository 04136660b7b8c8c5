package tkycsb

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"cloud.google.com/go/bigtable"
	"cloud.google.com/go/bigtable/bttest"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	// Every backend, so that every URL scheme is registered.
	_ "github.com/tablekit/tablekit/all"

	"github.com/tablekit/tablekit/internal/testkit/dynalitetest"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

// urlTarget is a tablekit target opened by URL.
func urlTarget(backend, u string, closeFn func()) Target {
	return Target{Backend: backend, Client: "tablekit", URL: u, Close: closeFn,
		Open: func(ctx context.Context) (Binding, error) { return openBinding(ctx, u) }}
}

// openBinding is Open as a Binding: a nil interface on error.
func openBinding(ctx context.Context, u string) (Binding, error) {
	d, err := Open(ctx, u)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// MemTarget is the local engine, through mem://.
func MemTarget() Target { return urlTarget("local (mem://)", "mem://ycsb", nil) }

// FileTarget is the durable engine in a new directory under dir (removed
// by Close), through file://.
func FileTarget(dir string) (Target, error) {
	d, err := os.MkdirTemp(dir, "ycsb-file-")
	if err != nil {
		return Target{}, err
	}
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(d)}).String()
	return urlTarget("durable (file://)", u, func() { os.RemoveAll(d) }), nil
}

// bigtableMaxMessage is Bigtable's request size limit: bttest would keep
// gRPC's 4 MiB default otherwise.
const bigtableMaxMessage = 256 << 20

func newBttest() (*bttest.Server, error) {
	return bttest.NewServer("127.0.0.1:0", grpc.MaxRecvMsgSize(bigtableMaxMessage), grpc.MaxSendMsgSize(bigtableMaxMessage))
}

// BigtableTargets are the adapter (bigtable://, with BIGTABLE_EMULATOR_HOST
// set while it dials) and the raw client, each on its own in-process
// bttest.
func BigtableTargets() ([]Target, error) {
	const backend = "bigtable (bttest)"
	srvA, err := newBttest()
	if err != nil {
		return nil, err
	}
	srvR, err := newBttest()
	if err != nil {
		srvA.Close()
		return nil, err
	}
	adapter := Target{Backend: backend, Client: "tablekit", URL: "bigtable://proj/inst", Close: srvA.Close,
		Open: func(ctx context.Context) (Binding, error) {
			old, had := os.LookupEnv("BIGTABLE_EMULATOR_HOST")
			os.Setenv("BIGTABLE_EMULATOR_HOST", srvA.Addr)
			defer func() {
				if had {
					os.Setenv("BIGTABLE_EMULATOR_HOST", old)
				} else {
					os.Unsetenv("BIGTABLE_EMULATOR_HOST")
				}
			}()
			return openBinding(ctx, "bigtable://proj/inst")
		}}
	var c *bigtable.Client
	var admin *bigtable.AdminClient
	raw := Target{Backend: backend, Client: "raw",
		Close: func() {
			if c != nil {
				c.Close()
			}
			if admin != nil {
				admin.Close()
			}
			srvR.Close()
		},
		Open: func(ctx context.Context) (Binding, error) {
			opts := []option.ClientOption{
				option.WithEndpoint(srvR.Addr),
				option.WithoutAuthentication(),
				option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
			}
			var err error
			if c, err = bigtable.NewClientWithConfig(ctx, "proj", "inst", bigtable.ClientConfig{MetricsProvider: bigtable.NoopMetricsProvider{}}, opts...); err != nil {
				return nil, err
			}
			if admin, err = bigtable.NewAdminClient(ctx, "proj", "inst", opts...); err != nil {
				return nil, err
			}
			return NewRawBigtable(c, admin), nil
		}}
	return []Target{adapter, raw}, nil
}

// DynamoDBShards is the number of shards of both DynamoDB targets (the
// adapter's default).
const DynamoDBShards = 8

// DynamoDBTargets are the adapter (dynamodb://) and the raw client, each on
// its own dynalite (see internal/testkit/dynalitetest; run npm ci at the
// repository root first). Credentials are dummies in the environment.
func DynamoDBTargets() ([]Target, error) {
	t, err := dynamoDBTargets(false)
	if err != nil {
		return nil, err
	}
	return t[:2], nil
}

// DynamoDBTargetsShaped is DynamoDBTargets and two more targets, raw
// clients on the raw client's dynalite (its table too) whose updates are
// AdapterShaped: with a term per field, as the adapter's, and with one
// item term (ItemTermShaped).
func DynamoDBTargetsShaped() ([]Target, error) { return dynamoDBTargets(true) }

func dynamoDBTargets(itemTerm bool) ([]Target, error) {
	const backend = "dynamodb (dynalite)"
	epA, stopA, err := dynalitetest.Launch()
	if err != nil {
		return nil, err
	}
	epR, stopR, err := dynalitetest.Launch()
	if err != nil {
		stopA()
		return nil, err
	}
	for _, kv := range [][2]string{{"AWS_ACCESS_KEY_ID", "ycsb"}, {"AWS_SECRET_ACCESS_KEY", "ycsb"}} {
		if os.Getenv(kv[0]) == "" {
			os.Setenv(kv[0], kv[1])
		}
	}
	u := fmt.Sprintf("dynamodb://?region=us-east-1&endpoint=%s&shards=%d", url.QueryEscape(epA), DynamoDBShards)
	open := func(shaped, itemTerm bool) func(ctx context.Context) (Binding, error) {
		return func(ctx context.Context) (Binding, error) {
			c := dynamodb.New(dynamodb.Options{
				Region:       "us-east-1",
				BaseEndpoint: aws.String(epR),
				Credentials:  credentials.NewStaticCredentialsProvider("ycsb", "ycsb", ""),
			})
			r := NewRawDynamoDB(c, DynamoDBShards)
			r.AdapterShaped, r.ItemTermShaped = shaped, itemTerm
			return r, nil
		}
	}
	raw := Target{Backend: backend, Client: "raw", Close: stopR, Open: open(false, false)}
	shaped := Target{Backend: backend, Client: "raw, adapter-shaped updates", Open: open(true, false)}
	if !itemTerm {
		return []Target{urlTarget(backend, u, stopA), raw, shaped}, nil
	}
	item := Target{Backend: backend, Client: "raw, adapter-shaped updates, one item term", Open: open(true, true)}
	return []Target{urlTarget(backend, u, stopA), raw, shaped, item}, nil
}

// TablestoreTargets are the adapter (tablestore://, credentials in the
// environment) and the raw SDK, each on its own in-process Tablestore
// emulator (tsemu).
func TablestoreTargets() ([]Target, error) {
	const backend = "tablestore (tsemu)"
	srvA, err := tsemu.NewServer(tsemu.Options{Backend: localengine.New()})
	if err != nil {
		return nil, err
	}
	srvR, err := tsemu.NewServer(tsemu.Options{Backend: localengine.New()})
	if err != nil {
		srvA.Close()
		return nil, err
	}
	os.Setenv("TABLESTORE_ACCESS_KEY_ID", srvA.AccessKeyID())
	os.Setenv("TABLESTORE_ACCESS_KEY_SECRET", srvA.AccessKeySecret())
	u := fmt.Sprintf("tablestore://%s?endpoint=%s", srvA.InstanceName(), url.QueryEscape(srvA.Endpoint()))
	raw := Target{Backend: backend, Client: "raw", Close: srvR.Close,
		Open: func(context.Context) (Binding, error) {
			return NewRawTablestore(tablestore.NewClient(srvR.Endpoint(), srvR.InstanceName(), srvR.AccessKeyID(), srvR.AccessKeySecret())), nil
		}}
	return []Target{urlTarget(backend, u, srvA.Close), raw}, nil
}
