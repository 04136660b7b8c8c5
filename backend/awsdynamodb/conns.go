package awsdynamodb

import (
	"context"
	"net"
	"sync"
)

// conns tracks the connections of an HTTP client Open owns, so that Close
// releases every one of them. Closing the transport's idle connections is
// not enough: a call's connection goes back to the idle pool a moment
// after the call returns (net/http's read loop puts it there once the body
// is consumed), so a Close right after a call can find it still busy and
// leave it open, with its two goroutines, until the server or the idle
// timeout closes it; and the client the default configuration builds when
// AWS_CA_BUNDLE is set (an awshttp.BuildableClient) hides its transport.
type conns struct {
	mu  sync.Mutex
	set map[*trackedConn]struct{}
}

type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// dialer returns dial (nil: a plain net.Dialer's) recording every
// connection it opens.
func (c *conns) dialer(dial dialFunc) dialFunc {
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		t := &trackedConn{Conn: nc, owner: c}
		c.mu.Lock()
		if c.set == nil {
			c.set = map[*trackedConn]struct{}{}
		}
		c.set[t] = struct{}{}
		c.mu.Unlock()
		return t, nil
	}
}

// closeAll closes every connection still open, idle or not (a call still
// in flight fails, as the Backend contract allows after Close). The
// transport drops a pooled connection once its read fails.
func (c *conns) closeAll() {
	c.mu.Lock()
	open := make([]*trackedConn, 0, len(c.set))
	for t := range c.set {
		open = append(open, t)
	}
	c.mu.Unlock()
	for _, t := range open {
		t.Close()
	}
}

// trackedConn is a connection that leaves its set when it is closed.
type trackedConn struct {
	net.Conn
	owner *conns
	once  sync.Once
}

func (t *trackedConn) Close() error {
	t.once.Do(func() {
		t.owner.mu.Lock()
		delete(t.owner.set, t)
		t.owner.mu.Unlock()
	})
	return t.Conn.Close()
}
