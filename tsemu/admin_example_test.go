package tsemu_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"strings"

	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

// ExampleServer_AdminHandler drives the test-control endpoint over HTTP,
// as a test in any language would: advance the server's clock (TTL and
// the version window follow it), then make a share of PutRow calls fail
// with OTSServerBusy.
func ExampleServer_AdminHandler() {
	srv, err := tsemu.NewServer(tsemu.Options{Backend: localengine.New(), AdminAddr: "127.0.0.1:0", AdminToken: "t0ken-of-16-chars"})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	post := func(path, body string) string {
		req, _ := http.NewRequest("POST", srv.AdminEndpoint()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer t0ken-of-16-chars")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		var out any
		json.NewDecoder(resp.Body).Decode(&out)
		if m, ok := out.(map[string]any); ok {
			delete(m, "now") // varies
		}
		b, _ := json.Marshal(out)
		return string(b)
	}
	fmt.Println(post("/admin/v1/clock", `{"advance": "25h"}`))
	fmt.Println(post("/admin/v1/faults", `{"operation": "PutRow", "code": "OTSServerBusy", "rate": 0.25, "seed": 7}`))
	fmt.Println(post("/admin/v1/reset", ``))
	// Output:
	// {"offset":"25h0m0s"}
	// [{"code":"OTSServerBusy","operation":"PutRow","rate":0.25,"seed":7}]
	// {"tables_deleted":0}
}
