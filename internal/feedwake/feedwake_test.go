package feedwake

import (
	"sync"
	"testing"
	"time"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestSignal(t *testing.T) {
	var s Signal
	s.Notify() // no waiter: nothing to close, nothing kept
	a := s.Wait()
	if b := s.Wait(); b != a {
		t.Fatal("two waits before a notify got different channels")
	}
	if closed(a) {
		t.Fatal("closed before any notify after the wait")
	}
	s.Notify()
	if !closed(a) {
		t.Fatal("a notify did not close the waiters' channel")
	}
	if c := s.Wait(); closed(c) {
		t.Fatal("a wait after the notify got a closed channel")
	}
}

// Concurrent waiters and notifiers: every wait that began before a notify
// is woken (run with -race).
func TestSignalConcurrent(t *testing.T) {
	var s Signal
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				ch := s.Wait()
				go s.Notify()
				select {
				case <-ch:
				case <-time.After(10 * time.Second):
					t.Error("a waiter was not woken")
					return
				}
			}
		}()
	}
	wg.Wait()
}
