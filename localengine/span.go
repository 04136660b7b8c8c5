package localengine

import (
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
// Keys inline. Every key a span holds begins with its prefix (pre: the
// common prefix of its keys or shorter), and each of its entries keeps 8
// bytes of its key inline (entry.pfx), by which the B-tree compares
// entries first (less, row.go): a walk down the tree reads a row's key,
// behind the entry's pointer (a cache miss), only where those bytes tie.
// Keys of one range share their first bytes (a table's keys often begin
// alike: "user0000…"), which a fixed 8 bytes of the key's start would not
// tell apart; the bytes past a span's prefix do, unless the keys share
// bytes past it too: the keys of an index's entry table hold the index
// value, then bytes every entry has (the value's terminator, escaped: 00
// FF 01; a row key's common start, "user0…"), then the row's key, so the
// 8 bytes past the prefix tie for every entry of one value. So the bytes
// an entry keeps are not all next to each other: the span's key shape
// (keyShape) lists the positions past the prefix where every key of the
// span has the same byte (fixed, up to a bound), and pfx is the key's
// bytes at the first 8 positions past the prefix that are not fixed (at),
// zero past the key's end. Two keys of the span differ first at a position
// that is not fixed, so pfx orders as the keys do: pfx(a) < pfx(b) implies
// a < b, and a < b implies pfx(a) <= pfx(b). A probe for a key that
// differs from the span's keys at a fixed position (or ends before it)
// differs there from all of them alike: its pfx is its bytes at the
// positions of at before that one, then all zeros (it is below them there)
// or all 0xFF (above), ties resolved by the keys; a key that does not
// begin with the prefix sorts so below or above every entry (0 or the
// greatest uint64), as before fixed positions past the prefix were kept.
// The shape is computed from the keys when a span is built (a split or a
// merge), set to the key of the first row stored in an empty span (every
// position fixed), and, when a row is stored whose key has not the fixed
// bytes, made smaller (the prefix shortened, positions unfixed), with
// every entry's bytes computed anew (under the span's lock alone; each
// time the prefix and the fixed positions lose a position at least, so
// between two of the settings above a span's entries are rebuilt at most
// as many times as they had positions).

// spanRows is the default number of entries above which a span splits.
const spanRows = 2048

// span is one key range of a table's rows.
type span struct {
	mu    sync.RWMutex
	rows  *btree.BTreeG[entry] // ordered by encoded key (less); row.go
	pre   string               // every key of rows begins with pre (see Keys inline)
	shape *keyShape            // which bytes of a key its entry keeps (see Keys inline); never changed, replaced
	_     [8]byte              // a cache line of its own: writers of different spans share none
}

// maxFixed bounds a key shape's fixed positions (a position not listed is
// taken as one the keys differ at: always safe, see Keys inline).
const maxFixed = 64

// keyShape says which bytes of its keys a span's entries keep (pfx): the
// key's bytes at at, zero past its end.
type keyShape struct {
	tmpl string // a copy of a key of the span: tmpl[:len(pre)] is the prefix
	// fixed are the positions past the prefix, below at[7], where every
	// key has tmpl's byte: runs [from, to) of them, ascending (a key is
	// checked a run at a time: a comparison of its bytes with tmpl's).
	fixed [][2]int32
	at    [8]int32 // the first 8 positions past the prefix not fixed; ascending
	run   bool     // at is 8 positions in a row: pfx is keyBytes of the key from at[0]
}

// newShape returns the shape of keys that begin with tmpl[:npre] and have
// tmpl's bytes at fixed (ascending, past npre; those above at[7] are
// dropped).
func newShape(tmpl string, npre int, fixed []int32) *keyShape {
	sh := &keyShape{tmpl: tmpl}
	i, j := int32(npre), 0
	for n := 0; n < len(sh.at); i++ {
		if j < len(fixed) && fixed[j] == i {
			if r := len(sh.fixed) - 1; r >= 0 && sh.fixed[r][1] == i {
				sh.fixed[r][1]++
			} else {
				sh.fixed = append(sh.fixed, [2]int32{i, i + 1})
			}
			j++
			continue
		}
		sh.at[n] = i
		n++
	}
	sh.run = sh.at[7] == sh.at[0]+7
	return sh
}

// positions calls fn with each of the shape's fixed positions, in order.
func (sh *keyShape) positions(fn func(int32)) {
	for _, r := range sh.fixed {
		for i := r[0]; i < r[1]; i++ {
			fn(i)
		}
	}
}

// bytes returns pfx of k, a key that begins with the span's prefix and
// has tmpl's bytes at fixed.
func (sh *keyShape) bytes(k string) uint64 {
	if sh.run {
		return keyBytes(k[min(int(sh.at[0]), len(k)):])
	}
	var p uint64
	for _, i := range sh.at {
		p <<= 8
		if int(i) < len(k) {
			p |= uint64(k[i])
		}
	}
	return p
}

// newSpan returns a span holding rows, whose keys all begin with pre.
func newSpan(rows *btree.BTreeG[entry], pre string) *span {
	return &span{rows: rows, pre: pre, shape: newShape(pre, len(pre), nil)}
}

// spanOfItems returns a new span holding items, sorted by key, its prefix the
// common prefix of their keys and its shape theirs.
func spanOfItems(items []entry) *span {
	s := newSpan(newRows(), "")
	if len(items) > 0 {
		s.reset(items[0].key())
		for _, ent := range items[1:] {
			if c, _ := s.deviation(ent.key()); c >= 0 {
				s.narrow(ent.key())
			}
		}
	}
	for _, ent := range items {
		ent.pfx = s.shape.bytes(ent.key())
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

// deviation returns the first position of the prefix or of the shape's
// fixed ones where the encoded key k has not the span's byte (it ends
// before it, or its byte differs), and whether k is below the span's keys
// there; -1 if there is none: k's pfx is then shape.bytes(k).
func (s *span) deviation(k string) (int, bool) {
	if !strings.HasPrefix(k, s.pre) {
		c := len(commonPrefix(k, s.pre))
		return c, c == len(k) || k[c] < s.pre[c]
	}
	sh := s.shape
	for _, r := range sh.fixed {
		from, to := int(r[0]), int(r[1])
		if to <= len(k) && k[from:to] == sh.tmpl[from:to] {
			continue
		}
		for i := from; i < to; i++ {
			switch {
			case i >= len(k):
				return i, true
			case k[i] != sh.tmpl[i]:
				return i, k[i] < sh.tmpl[i]
			}
		}
	}
	return -1, false
}

// pfxOf is the pfx of a probe for k (see Keys inline).
func (s *span) pfxOf(k string) uint64 {
	c, below := s.deviation(k)
	if c < 0 {
		return s.shape.bytes(k)
	}
	// Its bytes at the positions before c, then k's side of every key.
	var p uint64
	n := 0
	for _, i := range s.shape.at {
		if int(i) > c {
			break
		}
		p <<= 8
		if int(i) < len(k) {
			p |= uint64(k[i])
		}
		n++
	}
	for ; n < 8; n++ {
		p <<= 8
		if !below {
			p |= 0xff
		}
	}
	return p
}

// admit sets ent's pfx for s, first making s's shape one ent's key has
// (the caller holds s.mu alone, about to store ent).
func (s *span) admit(ent *entry) {
	k := ent.key()
	switch c, _ := s.deviation(k); {
	case s.rows.Len() == 0:
		s.reset(k)
	case c >= 0:
		s.narrow(k)
		rows := newRows()
		s.rows.Scan(func(e entry) bool {
			e.pfx = s.shape.bytes(e.key())
			rows.Load(e) // in order: appended at the right edge
			return true
		})
		s.rows = rows
	}
	ent.pfx = s.shape.bytes(k)
}

// reset makes s's prefix and shape those of the one encoded key k: every
// position fixed (s's entries' pfx are then stale: the caller sets them).
func (s *span) reset(k string) {
	s.pre = strings.Clone(k)
	s.shape = newShape(s.pre, len(s.pre), nil)
}

// narrow makes s's prefix and shape ones the encoded key k has too, k
// having not the span's byte at one of its fixed positions (deviation):
// the prefix is shortened to what k shares of it, and the positions stay
// fixed where k has the span's byte (s's entries' pfx are then stale: the
// caller sets them).
func (s *span) narrow(k string) {
	sh := s.shape
	npre := len(commonPrefix(s.pre, k))
	var fixed []int32
	same := func(i int32) bool { return int(i) < len(k) && k[i] == sh.tmpl[i] }
	for i := int32(npre) + 1; int(i) < len(s.pre) && len(fixed) < maxFixed; i++ {
		if same(i) {
			fixed = append(fixed, i)
		}
	}
	sh.positions(func(i int32) {
		if same(i) && len(fixed) < maxFixed {
			fixed = append(fixed, i)
		}
	})
	s.pre, s.shape = sh.tmpl[:npre], newShape(sh.tmpl, npre, fixed)
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
