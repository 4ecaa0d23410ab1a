package tokenizer

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// charsMap is SentencePiece's precompiled normalisation map (the
// "precompiled_charsmap" of a Precompiled normalizer, nmt_nfkc for XLM-R):
// a double-array trie (darts-clone layout) over UTF-8 keys whose values
// point into a block of NUL-terminated replacement strings.
type charsMap struct {
	units       []uint32
	replacement []byte
}

func parseCharsMap(b64 string) (*charsMap, error) {
	blob, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, errors.New("precompiled_charsmap is not base64")
	}
	if len(blob) < 4 {
		return nil, errors.New("precompiled_charsmap is too short")
	}
	n := binary.LittleEndian.Uint32(blob)
	if n%4 != 0 || uint64(n) > uint64(len(blob)-4) || n == 0 {
		return nil, errors.New("precompiled_charsmap: trie size does not fit the blob")
	}
	m := &charsMap{units: make([]uint32, n/4), replacement: blob[4+n:]}
	for i := range m.units {
		m.units[i] = binary.LittleEndian.Uint32(blob[4+4*i:])
	}
	return m, nil
}

// Darts-clone unit fields.
func unitHasLeaf(u uint32) bool  { return (u>>8)&1 == 1 }
func unitValue(u uint32) uint32  { return u & (1<<31 - 1) }
func unitLabel(u uint32) uint32  { return u & (1<<31 | 0xff) }
func unitOffset(u uint32) uint32 { return (u >> 10) << ((u & (1 << 9)) >> 6) }

// firstMatch returns the replacement of the shortest key that is a prefix
// of key, as SentencePiece's normaliser looks it up.
func (m *charsMap) firstMatch(key string) (string, bool) {
	pos := unitOffset(m.units[0])
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == 0 {
			break
		}
		pos ^= uint32(c)
		if int(pos) >= len(m.units) {
			return "", false
		}
		u := m.units[pos]
		if unitLabel(u) != uint32(c) {
			return "", false
		}
		pos ^= unitOffset(u)
		if int(pos) >= len(m.units) {
			return "", false
		}
		if unitHasLeaf(u) {
			start := int(unitValue(m.units[pos]))
			if start >= len(m.replacement) {
				return "", false
			}
			end := start
			for end < len(m.replacement) && m.replacement[end] != 0 {
				end++
			}
			return string(m.replacement[start:end]), true
		}
	}
	return "", false
}

// normalize maps s as the Hugging Face tokenizers library applies a
// precompiled map: grapheme cluster by grapheme cluster, a cluster shorter
// than six bytes is replaced whole by the entry of its shortest matching
// prefix, if any; otherwise each of its characters is looked up alone.
func (m *charsMap) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	state := -1
	for s != "" {
		var g string
		g, s, _, state = uniseg.FirstGraphemeClusterInString(s, state)
		if len(g) < 6 {
			if r, ok := m.firstMatch(g); ok {
				b.WriteString(r)
				continue
			}
		}
		for i, c := range g {
			part := g[i : i+utf8.RuneLen(c)]
			if r, ok := m.firstMatch(part); ok {
				b.WriteString(r)
			} else {
				b.WriteString(part)
			}
		}
	}
	return b.String()
}
