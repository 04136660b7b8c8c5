package tsemu

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
)

// TestAdminClockGovernsTTL: with `tablestore-emulator -clock manual` and an
// AdminClock given to the tablekit client, client-stamped writes are
// accepted at any time the test sets, and TTL follows the same clock; a
// client on a clock of its own is refused (the failure the shared clock
// removes).
func TestAdminClockGovernsTTL(t *testing.T) {
	const token = "admin-clock-token-5521"
	t.Setenv("TABLESTORE_EMULATOR_ADMIN_TOKEN", token)
	emu := startEmulator(t, "-clock", "manual", "-admin-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`admin: +(http://\S+)/admin/v1/`).FindStringSubmatch(emu.banner(t))
	if m == nil {
		t.Fatalf("no admin endpoint in the banner:\n%s", emu.stderr.String())
	}
	ctx := context.Background()
	clock, err := NewAdminClock(ctx, m[1], token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewAdminClock(ctx, m[1], "wrong"); err == nil {
		t.Error("NewAdminClock with a wrong token succeeded")
	}
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := clock.Set(ctx, start); err != nil {
		t.Fatal(err)
	}
	if !clock.Now().Equal(start) {
		t.Fatalf("after Set: Now = %v, want %v", clock.Now(), start)
	}
	t.Setenv(aliyuntablestore.EnvAccessKeyID, DefaultAccessKeyID)
	t.Setenv(aliyuntablestore.EnvAccessKeySecret, emu.secret)
	t.Setenv(aliyuntablestore.EnvSecurityToken, "")
	url := "tablestore://" + DefaultInstanceName + "?endpoint=" + emu.endpoint
	db, err := tablekit.Open(ctx, url, tablekit.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "ttl", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeString}},
		Options: tablekit.TableOptions{MaxVersions: 1, TTL: 24 * time.Hour}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("ttl")
	key := tablekit.Key("k", tablekit.String("a"))
	if err := tbl.PutRow(ctx, key, []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatalf("PutRow stamped by the shared clock at %v: %v", start, err)
	}
	row, found, err := tbl.GetRow(ctx, key)
	if err != nil || !found || len(row.Columns) != 1 || row.Columns[0].Version != start.UnixMilli() {
		t.Fatalf("GetRow = %+v, %v, %v; want v at version %d", row, found, err, start.UnixMilli())
	}
	if err := clock.Advance(ctx, 23*time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, found, err := tbl.GetRow(ctx, key); err != nil || !found {
		t.Fatalf("23 h later (TTL 24 h): found %v, %v; want the row", found, err)
	}
	if err := clock.Advance(ctx, 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, found, err := tbl.GetRow(ctx, key); err != nil || found {
		t.Fatalf("25 h later (TTL 24 h): found %v, %v; want the row expired", found, err)
	}
	if err := tbl.PutRow(ctx, key, []tablekit.Column{{Name: "v", Value: tablekit.Integer(2)}}); err != nil {
		t.Fatalf("PutRow after Advance: %v", err)
	}

	// A client on a clock of its own, 25 h behind the server's: the
	// server refuses its versions, as the service would.
	own, err := tablekit.Open(ctx, url, tablekit.WithClock(tablekit.NewManualClock(start)))
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	err = own.Table("ttl").PutRow(ctx, tablekit.Key("k", tablekit.String("b")), []tablekit.Column{{Name: "v", Value: tablekit.Integer(3)}})
	if !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Fatalf("PutRow from a client clock 25 h behind the server's: %v, want ErrInvalidArgument (outside the version window)", err)
	}
	t.Logf("a client on its own clock: %v", err)
}
