// Package feedwake is the commit signal the embedded engines give a change
// feed's followers (tablekit.FeedWaiter): a follower that has read a
// table's feed to its end waits on the table's Signal, and the engine
// notifies it when a change record commits, so the follower reads the
// record then instead of after a fixed poll.
package feedwake

import "sync/atomic"

// Signal wakes waiters at the next Notify. The zero Signal is ready. A
// Notify with no waiter costs an atomic load: writers of a table whose
// feed nobody follows share no written word through it.
type Signal struct {
	ch atomic.Pointer[chan struct{}]
}

// Wait returns a channel closed by the first Notify after the call (or
// before it, not yet seen by a Wait: a wake is never lost, it may come
// early). A waiter gets the channel before it reads the feed, then reads,
// then waits: a record committed after its read closes the channel.
func (s *Signal) Wait() <-chan struct{} {
	for {
		if p := s.ch.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if s.ch.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// Notify closes the channel of the current waiters, if any; later Waits
// get a new one. The caller calls it after the record it reports is
// visible to readers.
func (s *Signal) Notify() {
	if s.ch.Load() == nil {
		return
	}
	if p := s.ch.Swap(nil); p != nil {
		close(*p)
	}
}
