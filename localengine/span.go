package localengine

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/tidwall/btree"

	"github.com/tablekit/tablekit"
)

// A table's rows are range-partitioned into spans: each span holds the
// entries of one contiguous range of encoded keys, [lows[i], lows[i+1]),
// in a B-tree of its own guarded by its own RWMutex, so that writers of
// different spans store their rows together. Below, "t.mu" is the table's
// lock: held shared is t.mu.RLock (a reader) or one writer slot (a
// single-row writer, engine.go), held alone is t.lock (t.mu and every
// slot). The rules:
//
//   - The span list (t.lows, t.spans) changes only under the table's lock
//     held alone (t.lock); everyone who looks a span up holds t.mu, at
//     least shared. So under t.mu shared the list is fixed, and a span is
//     found by a binary search of the lower bounds (lows[0] is "", below
//     every key).
//   - A span's B-tree changes under t.mu shared plus the span's lock alone
//     (a writer storing one row), or under t.mu alone (an atomic write,
//     and splits and merges); it is read under t.mu shared plus the span's
//     lock shared. A span's lock is never taken without t.mu.
//   - A span that grows beyond t.spanRows entries is split at its median,
//     and one that a delete leaves with at most t.spanRows/8 entries is
//     merged into a neighbour when the two hold at most t.spanRows/2
//     together, or when it is empty. Both happen under t.mu alone, taken
//     by the writer that made the span so, once it released t.mu and the
//     span's lock (an atomic write does it in its own hold of t.mu). A
//     split copies the span's entries once: O(spanRows) per spanRows/2
//     inserts. So no span is empty but the only one, and no two
//     neighbours both hold at most t.spanRows/8 entries (the second to get
//     there merges): a table of n rows, however it shrank, has at most
//     16n/spanRows+1 spans, and a range read walks its rows span by span,
//     taking each span's lock once per batch.
//
// Keys inline. Every key a span holds begins with its prefix (pre: a copy,
// the common prefix of its keys or shorter), and each of its entries keeps
// the 8 bytes of its key past the prefix (entry.pfx), by which the B-tree
// compares entries first (less, row.go): a walk down the tree reads a
// row's key, behind the entry's pointer (a cache miss), only where those
// bytes tie. Keys of one range share their first bytes (a table's keys
// often begin alike: "user0000…"), which a fixed 8 bytes of the key's
// start would not tell apart; the bytes past a span's prefix do. A probe
// for a key that does not begin with the prefix sorts below or above every
// entry (0 or the greatest uint64, ties resolved by the keys). The prefix
// is set from the first and last key when a span is built (a split or a
// merge), from the key of the first row stored in an empty span, and
// shortened, with every entry's bytes computed anew, when a row is stored
// whose key does not begin with it (under the span's lock alone; by a
// byte at least each time, so between two of the settings above a span's
// entries are rebuilt at most as many times as its prefix had bytes).

// spanRows is the default number of entries above which a span splits.
const spanRows = 2048

// span is one key range of a table's rows.
type span struct {
	mu   sync.RWMutex
	rows *btree.BTreeG[entry] // ordered by encoded key (less); row.go
	pre  string               // every key of rows begins with pre (see Keys inline)
	_    [16]byte             // a cache line of its own: writers of different spans share none
}

// newSpan returns a span holding rows, whose keys all begin with pre.
func newSpan(rows *btree.BTreeG[entry], pre string) *span { return &span{rows: rows, pre: pre} }

// spanOfItems returns a new span holding items, sorted by key, its prefix the
// common prefix of their keys.
func spanOfItems(items []entry) *span {
	s := newSpan(newRows(), "")
	if len(items) > 0 {
		s.pre = strings.Clone(commonPrefix(items[0].key(), items[len(items)-1].key()))
	}
	for _, ent := range items {
		ent.pfx = keyBytes(ent.key()[len(s.pre):])
		s.rows.Load(ent) // sorted input: appended at the right edge
	}
	return s
}

// commonPrefix returns the longest common prefix of a and b.
func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return a[:i]
		}
	}
	return a[:n]
}

// probe returns an entry to look the encoded key k up with in s (the
// caller holds s.mu).
func (s *span) probe(k string) entry {
	return entry{rec: k, keyEnd: uint32(len(k)), pfx: s.pfxOf(k)}
}

// pfxOf is the pfx of a probe for k (see Keys inline).
func (s *span) pfxOf(k string) uint64 {
	switch {
	case strings.HasPrefix(k, s.pre):
		return keyBytes(k[len(s.pre):])
	case k < s.pre: // below every key that begins with pre
		return 0
	}
	return math.MaxUint64 // above every key that begins with pre
}

// admit sets ent's pfx for s, first shortening s's prefix to one ent's
// key begins with (the caller holds s.mu alone, about to store ent).
func (s *span) admit(ent *entry) {
	k := ent.key()
	switch {
	case s.rows.Len() == 0:
		s.pre = strings.Clone(k)
	case !strings.HasPrefix(k, s.pre):
		s.pre = commonPrefix(s.pre, k)
		rows := newRows()
		s.rows.Scan(func(e entry) bool {
			e.pfx = keyBytes(e.key()[len(s.pre):])
			rows.Load(e) // in order: appended at the right edge
			return true
		})
		s.rows = rows
	}
	ent.pfx = keyBytes(k[len(s.pre):])
}

// spanOf returns the index of the span whose range holds the encoded key k
// (the caller holds t.mu).
func (t *table) spanOf(k string) int {
	lo, hi := 1, len(t.lows) // the last span whose lower bound is <= k
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.lows[m] <= k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// get returns the stored entry of encoded key k (the caller holds t.mu).
func (t *table) get(k string) (entry, bool) { return t.getHint(k, nil) }

// getHint is get noting the path to k's entry in hint (when not nil), for
// a store of the same key under the same hold of t.mu to follow instead of
// walking the B-tree again (spans neither split nor merge meanwhile; a
// writer of another row may have moved entries, and then the B-tree
// searches where the hint no longer holds).
func (t *table) getHint(k string, hint *btree.PathHint) (entry, bool) {
	s := t.spans[t.spanOf(k)]
	s.mu.RLock()
	ent, ok := s.rows.GetHint(s.probe(k), hint)
	s.mu.RUnlock()
	return ent, ok
}

// store stores ent (keep) or deletes the row of encoded key k, with the
// change record of w, as applied, and its result res, in one hold of its
// span's lock (the caller holds t.mu shared): so a reader sees the row and
// a feed reader its record together, and records of one span are in the
// order of its stores. It reports whether the span should now be split or
// merged (see reshape). hint, when not nil, is getHint's path to the row.
func (t *table) store(k string, ent entry, keep bool, w *tablekit.WriteRequest, res *tablekit.UpdateResult, hint *btree.PathHint) (reshape bool) {
	i := t.spanOf(k)
	s := t.spans[i]
	s.mu.Lock()
	if keep {
		s.admit(&ent)
		s.rows.SetHint(ent, hint)
	} else {
		s.rows.Delete(s.probe(k))
	}
	if t.feed != nil { // the feed log is set up under t.mu alone
		t.feedMu.Lock()
		t.record(w, res)
		t.feedMu.Unlock()
	}
	n := s.rows.Len()
	s.mu.Unlock()
	switch {
	case n > t.spanRows:
		return true
	case !keep && n <= t.spanRows/8 && len(t.spans) > 1:
		return t.mergeable(i)
	}
	return false
}

// mergeable reports whether span i, small, would merge with a neighbour
// (the caller holds t.mu shared): the writer takes t.mu alone only then.
func (t *table) mergeable(i int) bool {
	size := func(j int) int {
		s := t.spans[j]
		s.mu.RLock()
		defer s.mu.RUnlock()
		return s.rows.Len()
	}
	n := size(i)
	if n == 0 {
		return true
	}
	return (i > 0 && n+size(i-1) <= t.spanRows/2) || (i+1 < len(t.spans) && n+size(i+1) <= t.spanRows/2)
}

// storeLocked is store for a caller who holds t.mu alone: it stores the
// row (keep) or deletes it, and reshapes its span.
func (t *table) storeLocked(k string, ent entry, keep bool) {
	s := t.spans[t.spanOf(k)]
	if keep {
		s.admit(&ent)
		s.rows.Set(ent)
	} else {
		s.rows.Delete(s.probe(k))
	}
	t.reshapeLocked(k)
}

// reshape splits or merges the span of encoded key k, if it still needs
// it, under t.mu taken alone.
func (t *table) reshape(k string) {
	t.lock()
	t.reshapeLocked(k)
	t.unlock()
}

// reshapeLocked splits the span of encoded key k at its median when it
// holds more than t.spanRows entries, or merges it into a neighbour when it
// holds at most t.spanRows/8 and the two hold at most t.spanRows/2, or
// when it is empty (the caller holds t.mu alone).
func (t *table) reshapeLocked(k string) {
	i := t.spanOf(k)
	s := t.spans[i]
	n := s.rows.Len()
	switch {
	case n > t.spanRows:
		items := s.rows.Items()
		mid := len(items) / 2
		t.spans[i] = spanOfItems(items[:mid])
		// The bound is a copy: the span must not keep a deleted row alive.
		t.lows = slices.Insert(t.lows, i+1, strings.Clone(items[mid].key()))
		t.spans = slices.Insert(t.spans, i+1, spanOfItems(items[mid:]))
	case n <= t.spanRows/8 && len(t.spans) > 1:
		j := -1 // the neighbour to merge with: the smaller one
		if i > 0 && (n == 0 || n+t.spans[i-1].rows.Len() <= t.spanRows/2) {
			j = i - 1
		}
		if i+1 < len(t.spans) && (n == 0 || n+t.spans[i+1].rows.Len() <= t.spanRows/2) &&
			(j < 0 || t.spans[i+1].rows.Len() < t.spans[j].rows.Len()) {
			j = i + 1
		}
		if j < 0 {
			return
		}
		l, r := min(i, j), max(i, j) // r's entries, all above l's, go to l
		t.spans[l] = spanOfItems(append(t.spans[l].rows.Items(), t.spans[r].rows.Items()...))
		t.lows = slices.Delete(t.lows, r, r+1)
		t.spans = slices.Delete(t.spans, r, r+1)
	}
}

// ascend calls fn with each entry of key >= from, in order, across spans,
// until fn returns false (the caller holds t.mu shared).
func (t *table) ascend(from string, fn func(entry) bool) {
	cont := true
	iter := func(ent entry) bool { cont = fn(ent); return cont }
	first := t.spanOf(from)
	for i := first; cont && i < len(t.spans); i++ {
		s := t.spans[i]
		s.mu.RLock()
		s.rows.Ascend(s.probe(from), planted(iter, i > first)) // mutant.go
		s.mu.RUnlock()
	}
}

// descend calls fn with each entry of key <= from, in descending order,
// across spans, until fn returns false (the caller holds t.mu shared).
func (t *table) descend(from string, fn func(entry) bool) {
	cont := true
	iter := func(ent entry) bool { cont = fn(ent); return cont }
	for i := t.spanOf(from); cont && i >= 0; i-- {
		s := t.spans[i]
		s.mu.RLock()
		s.rows.Descend(s.probe(from), iter)
		s.mu.RUnlock()
	}
}

// reverse calls fn with every entry, in descending order, until fn
// returns false (the caller holds t.mu shared).
func (t *table) reverse(fn func(entry) bool) {
	cont := true
	iter := func(ent entry) bool { cont = fn(ent); return cont }
	for i := len(t.spans) - 1; cont && i >= 0; i-- {
		s := t.spans[i]
		s.mu.RLock()
		s.rows.Reverse(iter)
		s.mu.RUnlock()
	}
}
