// Package ipadic segments Japanese text into the words of the IPA
// dictionary (IPADIC, as kagome-dict/ipa v1.2.6 ships it), with kagome's
// lattice and costs in its search mode, over a flat copy of the dictionary
// that is read in place: nothing is decoded when a process starts, and only
// the pages a text touches are read from the binary.
//
// ipadic.bin is made by gen (go generate) from kagome-dict/ipa; the analyze
// package's tests check that the words are kagome's on real text.
package ipadic

//go:generate go run ./gen -o ipadic.bin

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"sync"
	"unicode/utf8"
	"unsafe"
)

//go:embed ipadic.bin
var image string

const (
	magic   = "SGIPADIC"
	version = 1
)

// Sections of ipadic.bin, in gen's order.
const (
	secTrie = iota
	secDup
	secMorphs
	secKinds
	secConn
	secCharCat
	secInvoke
	secGroup
	secUnkIndex
	secUnkDup
	secUnkMorphs
	numSections
)

// Kind is what a word's part of speech makes of it for search.
type Kind uint8

// Kinds of words.
const (
	// Other words are no content: particles, auxiliary verbs, dependent
	// nouns (こと), pronouns, suffixes, adverbs, symbols.
	Other Kind = iota
	// Noun is a noun that can carry content (名詞 other than 非自立,
	// 代名詞, 接尾, 特殊).
	Noun
	// Inflected is an independent verb or adjective (動詞・形容詞, 自立).
	Inflected
	// Interjection is an interjection or greeting (感動詞: こんにちは,
	// ありがとう, はい).
	Interjection
)

// morph is a word's left and right context IDs and its cost.
type morph struct {
	Left, Right, Weight int16
}

// trieNode is one (base, check) pair of the double-array trie.
type trieNode struct {
	Base, Check int32
}

// Dict is the dictionary. Its slices point into the binary's read-only
// data; it is never written.
type Dict struct {
	trie      []trieNode
	dup       []uint8
	morphs    []morph
	kinds     []Kind
	conn      []int16
	connRows  int
	charCat   []uint8
	invoke    []uint8
	group     []uint8
	unkIndex  []int32
	unkDup    []int32
	unkMorphs []morph
	copied    bool // a section was decoded into the heap (not read in place)
}

// Load returns the dictionary, made once per process from the embedded
// image; it costs microseconds, not a decoding of the dictionary.
var Load = sync.OnceValue(func() *Dict {
	d, err := parse(image)
	if err != nil {
		// The image is generated and embedded with the code that reads it.
		panic("ipadic: " + err.Error())
	}
	return d
})

// parse reads the header of an image and points the dictionary's slices
// into it.
func parse(img string) (*Dict, error) {
	const fixed = 8 + 4*8
	if len(img) < fixed || img[:8] != magic {
		return nil, fmt.Errorf("not a dictionary image")
	}
	u64 := func(off int) uint64 { return binary.LittleEndian.Uint64([]byte(img[off : off+8])) }
	if v := u64(8); v != version {
		return nil, fmt.Errorf("image version %d, want %d", v, version)
	}
	if n := u64(16); n != numSections || len(img) < fixed+numSections*16 {
		return nil, fmt.Errorf("image has %d sections, want %d", n, numSections)
	}
	rows := int(u64(24))
	sec := make([]string, numSections)
	for i := range sec {
		off, n := u64(fixed+16*i), u64(fixed+16*i+8)
		if off > uint64(len(img)) || n > uint64(len(img))-off {
			return nil, fmt.Errorf("section %d out of bounds", i)
		}
		sec[i] = img[off : off+n]
	}
	d := &Dict{connRows: rows}
	d.trie = view[trieNode](sec[secTrie], &d.copied)
	d.dup = view[uint8](sec[secDup], &d.copied)
	d.morphs = view[morph](sec[secMorphs], &d.copied)
	d.kinds = view[Kind](sec[secKinds], &d.copied)
	d.conn = view[int16](sec[secConn], &d.copied)
	d.charCat = view[uint8](sec[secCharCat], &d.copied)
	d.invoke = view[uint8](sec[secInvoke], &d.copied)
	d.group = view[uint8](sec[secGroup], &d.copied)
	d.unkIndex = view[int32](sec[secUnkIndex], &d.copied)
	d.unkDup = view[int32](sec[secUnkDup], &d.copied)
	d.unkMorphs = view[morph](sec[secUnkMorphs], &d.copied)
	if len(d.dup) != len(d.morphs) || len(d.kinds) != len(d.morphs) || len(d.charCat) == 0 ||
		len(d.invoke) != len(d.group) || len(d.unkIndex) != len(d.invoke) || len(d.unkDup) != len(d.invoke) ||
		rows <= 0 || len(d.conn)%rows != 0 {
		return nil, fmt.Errorf("inconsistent section sizes")
	}
	return d, nil
}

// littleEndian is whether this machine stores integers as the image does.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// view returns s as a slice of T in place, when s is aligned for T and the
// machine is little-endian (amd64, arm64: every platform sagasu ships for);
// otherwise it decodes a copy and sets *copied. s is read-only: the slice
// must never be written.
func view[T any](s string, copied *bool) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	n := len(s) / size
	if n == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.StringData(s))
	if littleEndian && uintptr(p)%unsafe.Alignof(zero) == 0 {
		return unsafe.Slice((*T)(p), n)
	}
	// Decode: every T here is made of little-endian 1-, 2- or 4-byte
	// integers, so reading it field by field is reading it in units of
	// its alignment.
	*copied = true
	out := make([]T, n)
	dst := unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), n*size)
	unit := int(unsafe.Alignof(zero))
	for i := 0; i+unit <= n*size; i += unit {
		switch unit {
		case 1:
			dst[i] = s[i]
		case 2:
			*(*uint16)(unsafe.Pointer(&dst[i])) = binary.LittleEndian.Uint16([]byte(s[i : i+2]))
		case 4:
			*(*uint32)(unsafe.Pointer(&dst[i])) = binary.LittleEndian.Uint32([]byte(s[i : i+4]))
		}
	}
	return out
}

// InPlace reports whether the dictionary is read in place (no copy was
// made at load), as it is on little-endian machines.
func (d *Dict) InPlace() bool { return !d.copied }

// Size is the size of the dictionary image in bytes.
func Size() int { return len(image) }

// Kind returns the kind of a known word's part of speech.
func (d *Dict) Kind(id int) Kind { return d.kinds[id] }

// Lookup reports whether s is a word of the dictionary, and the kind of its
// first entry.
func (d *Dict) Lookup(s string) (Kind, bool) {
	found, kind := false, Other
	d.prefixes(s, func(id, n int) {
		if n == len(s) {
			found, kind = true, d.kinds[id]
		}
	})
	return kind, found
}

// prefixes calls f with the ID and byte length of every dictionary word
// that is a prefix of s (the first ID of words that share a surface),
// shortest first.
func (d *Dict) prefixes(s string, f func(id, n int)) {
	t := d.trie
	p, q := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0 {
			return
		}
		p = q
		q = int(t[p].Base) + int(c)
		if q >= len(t) || int(t[q].Check) != p {
			return
		}
		ahead := int(t[q].Base)
		if ahead >= 0 && ahead < len(t) && int(t[ahead].Check) == q && t[ahead].Base <= 0 {
			f(int(-t[ahead].Base), i+1)
		}
	}
}

// Cover cuts s into the fewest nouns of the dictionary of at least minRunes
// characters each that together are s, and returns them; nil when there is
// no such cut. Among cuts into as few parts, the one whose last part starts
// first wins.
func (d *Dict) Cover(s string, minRunes int) []string {
	if s == "" {
		return nil
	}
	// parts[i] is the fewest words that cover s[:i] (0: none does), from[i]
	// where the last of them starts.
	parts := make([]int, len(s)+1)
	from := make([]int, len(s)+1)
	parts[0] = 1 // offset by one: parts[i]-1 words
	for i := 0; i < len(s); i++ {
		if parts[i] == 0 {
			continue
		}
		d.prefixes(s[i:], func(id, n int) {
			if utf8.RuneCountInString(s[i:i+n]) < minRunes || !d.anyNoun(id) {
				return
			}
			j := i + n
			// Fewer parts win; among as few, the first found (the one
			// whose earlier parts end first) stays.
			if parts[j] == 0 || parts[i]+1 < parts[j] {
				parts[j], from[j] = parts[i]+1, i
			}
		})
	}
	if parts[len(s)] == 0 {
		return nil
	}
	out := make([]string, parts[len(s)]-1)
	for j, k := len(s), len(out)-1; j > 0; j, k = from[j], k-1 {
		out[k] = s[from[j]:j]
	}
	return out
}

// anyNoun reports whether any entry of the word with first ID id is a noun.
func (d *Dict) anyNoun(id int) bool {
	for i := id; i <= id+int(d.dup[id]); i++ {
		if d.kinds[i] == Noun {
			return true
		}
	}
	return false
}
