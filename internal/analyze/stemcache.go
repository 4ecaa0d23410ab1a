package analyze

import (
	"sync"
	"sync/atomic"
)

// stemSlots is the number of words the stem cache remembers (a power of
// two). Text repeats its words (Zipf), so a few thousand cover most of
// them; 16,384 slots cost 128 KB per analyzer, allocated on first use.
const stemSlots = 1 << 14

// stemCache remembers the Porter stems of recently seen words, shared by
// every goroutine using the analyzer: a direct-mapped table of immutable
// entries, read and replaced atomically, so a look-up takes no lock and a
// collision only costs stemming the word again. The stem of a word never
// changes, so a hit gives exactly what porterStem gives.
type stemCache struct {
	once  sync.Once
	slots *[stemSlots]atomic.Pointer[stemEntry]
}

type stemEntry struct {
	word, stem string
}

// stem returns the Porter stem of the lower-case ASCII word w, reusing w's
// array for the result as porterStem does.
func (c *stemCache) stem(w []byte) []byte {
	c.once.Do(func() { c.slots = new([stemSlots]atomic.Pointer[stemEntry]) })
	// FNV-1a: the words are short, and a table slot needs few bits.
	h := uint32(2166136261)
	for _, b := range w {
		h = (h ^ uint32(b)) * 16777619
	}
	slot := &c.slots[h&(stemSlots-1)]
	if e := slot.Load(); e != nil && e.word == string(w) {
		return append(w[:0], e.stem...) // a stem is never longer than its word
	}
	word := string(w)
	s := porterStem(w)
	slot.Store(&stemEntry{word: word, stem: string(s)})
	return s
}
