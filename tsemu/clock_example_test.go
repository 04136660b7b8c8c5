package tsemu_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

// ExampleAdminClock shares one clock between a tablekit client and an
// emulator reached through its admin endpoint, as with
// `tablestore-emulator -clock manual -admin-addr ...` in another process
// (here a server in process, on a frozen clock).
func ExampleAdminClock() {
	ctx := context.Background()
	srv, err := tsemu.NewServer(tsemu.Options{
		Backend:    localengine.New(),
		Clock:      tablekit.NewManualClock(time.Now()), // what -clock manual does
		AdminAddr:  "127.0.0.1:0",
		AdminToken: "example-admin-token-7f3a9c2e51",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	clock, err := tsemu.NewAdminClock(ctx, srv.AdminEndpoint(), "example-admin-token-7f3a9c2e51")
	if err != nil {
		log.Fatal(err)
	}
	// Give clock to the client: tablekit.Open(ctx, url, tablekit.WithClock(clock)).
	if err := clock.Set(ctx, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		log.Fatal(err)
	}
	if err := clock.Advance(ctx, 25*time.Hour); err != nil {
		log.Fatal(err)
	}
	fmt.Println("client:", clock.Now().UTC())
	fmt.Println("server:", srv.Now().UTC())
	// Output:
	// client: 2030-01-02 01:00:00 +0000 UTC
	// server: 2030-01-02 01:00:00 +0000 UTC
}
