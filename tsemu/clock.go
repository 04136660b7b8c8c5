package tsemu

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// One clock for a program and the emulator. Tablestore evaluates time on
// the server: it stamps cells written without a version, refuses versions
// outside the max-version-offset window around its now ("Invalid
// timestamp"), and expires cells by TTL at its now. A tablekit client
// stamps versions with its own clock (tablekit.WithClock). The two agree
// only when they read the same clock:
//
//   - in process, give the server the client's clock:
//     tsemu.Options{Clock: clock} with tablekit.WithClock(clock), one
//     tablekit.ManualClock for both;
//   - in another process (tsemu/cmd/tablestore-emulator), start the emulator
//     with -clock manual and an admin endpoint, and give the client an
//     AdminClock: its Set and Advance move the emulator's clock and then
//     its own to the emulator's new time.
//
// Against the real service there is no such clock: a client's ManualClock
// stamps the versions it writes, but the service checks them against its
// own time and applies TTL with it. See the package doc.

// AdminClock is a tablekit.Clock shared with an emulator in another
// process through its admin endpoint (Server.AdminHandler). Now reads the
// time the emulator answered at the last NewAdminClock, Set or Advance,
// without a network call; with an emulator started with -clock manual
// (whose time moves only when told) that is the emulator's time exactly.
// It is safe for concurrent use.
type AdminClock struct {
	endpoint, token string
	hc              *http.Client

	mu  sync.Mutex
	now time.Time
}

// NewAdminClock returns a clock reading the emulator's current time, for
// the admin endpoint (Server.AdminEndpoint, or the "admin:" line of the
// emulator's banner without its /admin/v1/ path) and its bearer token.
func NewAdminClock(ctx context.Context, adminEndpoint, token string) (*AdminClock, error) {
	c := &AdminClock{endpoint: strings.TrimSuffix(adminEndpoint, "/"), token: token, hc: &http.Client{Timeout: 30 * time.Second}}
	if err := c.do(ctx, http.MethodGet, nil); err != nil {
		return nil, err
	}
	return c, nil
}

// Now returns the emulator's time as of the last Set or Advance.
func (c *AdminClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set makes the emulator's clock, and then this one, read t.
func (c *AdminClock) Set(ctx context.Context, t time.Time) error {
	return c.do(ctx, http.MethodPost, map[string]any{"set": t})
}

// Advance moves the emulator's clock, and then this one, by d.
func (c *AdminClock) Advance(ctx context.Context, d time.Duration) error {
	return c.do(ctx, http.MethodPost, map[string]any{"advance": d.String()})
}

// do calls /admin/v1/clock and takes the emulator's answered time.
func (c *AdminClock) do(ctx context.Context, method string, body any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint+"/admin/v1/clock", rd)
	if err != nil {
		return fmt.Errorf("tsemu: admin clock: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("tsemu: admin clock: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		Now   time.Time `json:"now"`
		Error string    `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&out); err != nil {
		return fmt.Errorf("tsemu: admin clock %s: status %d, undecodable answer: %w", c.endpoint, resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("tsemu: admin clock %s: status %d: %s", c.endpoint, resp.StatusCode, out.Error)
	}
	c.mu.Lock()
	c.now = out.Now
	c.mu.Unlock()
	return nil
}
