package awsdynamodb_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
)

// TestMissingCredentials: with no credentials anywhere (no environment
// variables, a HOME without shared files, IMDS off), the first call fails
// with ErrPermissionDenied, as on every backend (issue 19 item 8: it was
// ErrUnavailable here and on Bigtable, depending on the path), and is not
// retried.
func TestMissingCredentials(t *testing.T) {
	ep := needDynalite(t)
	t.Setenv("HOME", t.TempDir())
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctx := context.Background()
	db, err := tablekit.Open(ctx, "dynamodb://?region=us-east-1&endpoint="+ep)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.ListTables(ctx)
	if !errors.Is(err, tablekit.ErrPermissionDenied) {
		t.Errorf("ListTables without credentials: %v, want ErrPermissionDenied", err)
	}
}

// TestNoRetryAfterSDKGaveUp: a batch the SDK already retried as far as it
// allows (every BatchWriteItem throttled, three attempts) comes back
// ErrThrottled at once; the adapter does not send it again (issue 19 item
// 8). With the SDK's retries off, the adapter's retries are the only ones
// (TestBatchWriteSurvivesFaults).
func TestNoRetryAfterSDKGaveUp(t *testing.T) {
	ft := newFaultTransport(1)
	ft.answer.Store(&cannedAnswer{op: "BatchWriteItem", status: 400,
		body: `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"The level of configured provisioned throughput for the table was exceeded."}`})
	ct := newCountingTransport()
	ct.base = ft
	b, err := awsdynamodb.New(newClient(t, &http.Client{Transport: ct}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 3 }), &awsdynamodb.Options{Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	db, tbl := newTable(t, b, nil, tablekit.TableOptions{})
	ct.reset()
	res, err := db.BatchWriteRow(context.Background(), []tablekit.BatchWrite{
		tablekit.BatchPut(tbl.Name(), tablekit.Key("pk", tablekit.String("a")).Add("sk", tablekit.Integer(1)), nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[0].Err, tablekit.ErrThrottled) {
		t.Errorf("the write: %v, want ErrThrottled", res[0].Err)
	}
	if n := ct.get("BatchWriteItem"); n != 3 {
		t.Errorf("%d BatchWriteItem calls, want the SDK's 3 attempts and no more", n)
	}
}
