package sqlite

import (
	"bytes"
	"container/list"
	"errors"
	"hash/maphash"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// blockCacheBytes bounds the decompressed text blockCache keeps.
const blockCacheBytes = 8 << 20

// blockCache keeps recently decompressed content blocks, least recently
// used out first. A search reads the hits it re-ranks and then the ones it
// returns, the same blocks twice; an agent repeats searches. It is keyed by
// the compressed bytes themselves (hash, then compared whole), so a block
// that another process rewrote can never be served stale.
type blockCache struct {
	mu    sync.Mutex
	seed  maphash.Seed
	max   int
	size  int
	items map[uint64]*list.Element
	lru   list.List // of *cachedBlock, most recent first
}

type cachedBlock struct {
	hash uint64
	comp []byte
	text string
}

func newBlockCache(max int) *blockCache {
	return &blockCache{seed: maphash.MakeSeed(), max: max, items: map[uint64]*list.Element{}}
}

// get returns the text of a compressed block if it is cached, and the hash
// to put it under if not.
func (c *blockCache) get(comp []byte) (text string, hash uint64, ok bool) {
	hash = maphash.Bytes(c.seed, comp)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, found := c.items[hash]; found {
		if b := e.Value.(*cachedBlock); bytes.Equal(b.comp, comp) {
			c.lru.MoveToFront(e)
			return b.text, hash, true
		}
	}
	return "", hash, false
}

// put caches the text of a compressed block; comp is copied.
func (c *blockCache) put(hash uint64, comp []byte, text string) {
	cost := len(comp) + len(text)
	if cost > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, found := c.items[hash]; found {
		c.drop(e)
	}
	c.items[hash] = c.lru.PushFront(&cachedBlock{hash: hash, comp: bytes.Clone(comp), text: text})
	c.size += cost
	for c.size > c.max {
		c.drop(c.lru.Back())
	}
}

func (c *blockCache) drop(e *list.Element) {
	b := c.lru.Remove(e).(*cachedBlock)
	delete(c.items, b.hash)
	c.size -= len(b.comp) + len(b.text)
}

// decode returns the text of a compressed block, from the cache when it
// can.
func (c *codec) decode(comp []byte) (string, error) {
	text, hash, ok := c.cache.get(comp)
	if ok {
		return text, nil
	}
	raw, err := c.dec.DecodeAll(comp, nil)
	if errors.Is(err, zstd.ErrUnknownDictionary) {
		raw, err = c.dict.decode(comp)
	}
	if err != nil {
		return "", err
	}
	text = string(raw)
	c.cache.put(hash, comp, text)
	return text, nil
}
