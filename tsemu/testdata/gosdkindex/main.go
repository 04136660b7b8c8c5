// Command gosdkindex runs the Go SDK's own secondary-index samples
// (package github.com/aliyun/aliyun-tablestore-go-sdk/sample:
// CreateTableWithGlobalIndexSample, CreateTableWithLocalIndexSample)
// against the endpoint in $endpoint with the emulator's default instance
// and key id and the secret in $secret. The samples print and never fail;
// TestGoSDKIndexSamples (gosdk_index_test.go) reads what they print and
// checks their effects with the SDK.
package main

import (
	"fmt"
	"os"

	"github.com/aliyun/aliyun-tablestore-go-sdk/sample"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: gosdkindex INSTANCE GLOBAL-TABLE LOCAL-TABLE (endpoint, key id and secret from the environment)")
		os.Exit(2)
	}
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.RetryTimes = 0
	client := tablestore.NewClientWithConfig(os.Getenv("endpoint"), os.Args[1], os.Getenv("accessKeyId"), os.Getenv("secret"), "", cfg)
	fmt.Println("=== CreateTableWithGlobalIndexSample")
	sample.CreateTableWithGlobalIndexSample(client, os.Args[2])
	fmt.Println("=== CreateTableWithLocalIndexSample")
	sample.CreateTableWithLocalIndexSample(client, os.Args[3])
	fmt.Println("=== done")
}
