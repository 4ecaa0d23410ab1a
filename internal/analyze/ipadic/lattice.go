package ipadic

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// This is kagome v2.10.3's lattice (tokenizer/lattice) in its search mode,
// over the flat dictionary: the same nodes in the same order, the same
// costs and the same tie-breaking, so the same words.

const (
	maximumCost              = 1<<31 - 1
	maximumUnknownWordLength = 1024
	searchModeKanjiLength    = 2
	searchModeKanjiPenalty   = 3000
	searchModeOtherLength    = 7
	searchModeOtherPenalty   = 1700
)

// Class says where a word came from.
type Class uint8

// Word classes.
const (
	// Known is a word of the dictionary.
	Known Class = iota + 1
	// Unknown is a run the dictionary does not know, cut by character
	// category.
	Unknown
)

// Token is one word of a segmented text.
type Token struct {
	Surface  string // the word as written (a substring of the text)
	Position int    // its byte offset in the text
	Class    Class
	ID       int // the word's ID (Known) or the unknown-word entry (Unknown)
}

// node is a lattice node.
type node struct {
	id       int32
	position int32 // byte offset of the surface in the input
	end      int32 // byte offset of its end
	start    int32 // rune offset of the surface
	class    Class // 0 for BOS and EOS
	left     int16
	right    int16
	weight   int32
	extra    int32 // the search-mode penalty this node adds to what follows it
	cost     int32
	prev     int32 // index of the best previous node, -1 for none
}

// lattice is the scratch of one segmentation.
type lattice struct {
	nodes []node
	list  [][]int32 // by rune position of a node's end: node indices
}

var latticePool = sync.Pool{New: func() any { return new(lattice) }}

// Tokens segments text into words. It is safe for concurrent use.
func (d *Dict) Tokens(text string) []Token {
	return d.AppendTokens(nil, text)
}

// AppendTokens appends the words of text to dst and returns the extended
// slice.
func (d *Dict) AppendTokens(dst []Token, text string) []Token {
	if text == "" {
		return dst
	}
	la := latticePool.Get().(*lattice)
	la.build(d, text)
	la.forward(d)
	dst = la.backward(dst, text)
	if cap(la.nodes) <= 1<<16 {
		latticePool.Put(la)
	}
	return dst
}

func (la *lattice) add(d *Dict, end int, id int, position, endByte, start int, class Class, surface string) {
	n := node{id: int32(id), position: int32(position), end: int32(endByte), start: int32(start), class: class, prev: -1}
	var m morph
	switch class {
	case Known:
		m = d.morphs[id]
	case Unknown:
		m = d.unkMorphs[id]
	}
	n.left, n.right, n.weight = m.Left, m.Right, int32(m.Weight)
	n.extra = int32(additionalCost(surface))
	la.nodes = append(la.nodes, n)
	la.list[end] = append(la.list[end], int32(len(la.nodes)-1))
}

// category is the character category of r.
func (d *Dict) category(r rune) uint8 {
	if int(r) < len(d.charCat) && r >= 0 {
		return d.charCat[r]
	}
	return d.charCat[0]
}

func (la *lattice) build(d *Dict, inp string) {
	rc := utf8.RuneCountInString(inp)
	la.nodes = la.nodes[:0]
	if cap(la.list) < rc+2 {
		la.list = make([][]int32, rc+2)
	}
	la.list = la.list[:rc+2]
	for i := range la.list {
		la.list[i] = la.list[i][:0]
	}
	// BOS and EOS (ID -1, no morph, no cost).
	la.add(d, 0, -1, 0, 0, 0, 0, "")
	la.add(d, rc+1, -1, len(inp), len(inp), rc, 0, "")

	runePos := -1
	for pos, ch := range inp {
		runePos++
		anyMatches := false
		d.prefixes(inp[pos:], func(id, l int) {
			surface := inp[pos : pos+l]
			end := runePos + utf8.RuneCountInString(surface)
			for i := id; i <= id+int(d.dup[id]); i++ {
				la.add(d, end, i, pos, pos+l, runePos, Known, surface)
			}
			anyMatches = true
		})
		class := d.category(ch)
		if anyMatches && d.invoke[class] == 0 {
			continue
		}
		endPos := pos + 1
		if ch != utf8.RuneError {
			endPos = pos + utf8.RuneLen(ch)
		}
		unkWordLen := 1
		if d.group[class] != 0 {
			for i, w := endPos, 0; i < len(inp); i += w {
				var c rune
				c, w = utf8.DecodeRuneInString(inp[i:])
				if d.category(c) != class {
					break
				}
				endPos += w
				unkWordLen++
				if unkWordLen >= maximumUnknownWordLength {
					break
				}
			}
		}
		prev := pos
		if c, size := utf8.DecodeLastRuneInString(inp[pos:endPos]); c != utf8.RuneError {
			prev = endPos - size
		}
		id, dup := int(d.unkIndex[class]), int(d.unkDup[class])
		for x := range dup + 1 {
			if pos < prev {
				s := inp[pos:prev]
				la.add(d, runePos+utf8.RuneCountInString(s), id+x, pos, prev, runePos, Unknown, s)
			}
			s := inp[pos:endPos]
			la.add(d, runePos+utf8.RuneCountInString(s), id+x, pos, endPos, runePos, Unknown, s)
		}
	}
}

func kanjiOnly(s string) bool {
	for _, r := range s {
		if !unicode.In(r, unicode.Ideographic) {
			return false
		}
	}
	return s != ""
}

// additionalCost is search mode's penalty on long words, so that long
// compounds are cut into their parts.
func additionalCost(s string) int {
	l := utf8.RuneCountInString(s)
	if l > searchModeKanjiLength && kanjiOnly(s) {
		return (l - searchModeKanjiLength) * searchModeKanjiPenalty
	}
	if l > searchModeOtherLength {
		return (l - searchModeOtherLength) * searchModeOtherPenalty
	}
	return 0
}

// forward runs the Viterbi forward pass.
func (la *lattice) forward(d *Dict) {
	rows := int64(d.connRows)
	for i := 1; i < len(la.list); i++ {
		for _, ti := range la.list[i] {
			target := &la.nodes[ti]
			prevList := la.list[target.start]
			if len(prevList) == 0 {
				target.cost = maximumCost
				continue
			}
			for j, pi := range prevList {
				n := &la.nodes[pi]
				c := d.conn[rows*int64(target.left)+int64(n.right)]
				total := int64(c) + int64(target.weight) + int64(n.cost) + int64(n.extra)
				if total > maximumCost {
					total = maximumCost
				}
				if j == 0 || int32(total) < target.cost {
					target.cost = int32(total)
					target.prev = pi
				}
			}
		}
	}
}

// backward follows the best path back from EOS and appends its words
// (without BOS and EOS) in text order.
func (la *lattice) backward(dst []Token, inp string) []Token {
	last := la.list[len(la.list)-1]
	if len(last) == 0 {
		return dst
	}
	from := len(dst)
	for p := la.nodes[last[0]].prev; p >= 0; p = la.nodes[p].prev {
		n := &la.nodes[p]
		if n.id < 0 && n.class == 0 {
			continue // BOS
		}
		dst = append(dst, Token{Surface: inp[n.position:n.end], Position: int(n.position), Class: n.class, ID: int(n.id)})
	}
	for i, j := from, len(dst)-1; i < j; i, j = i+1, j-1 {
		dst[i], dst[j] = dst[j], dst[i]
	}
	return dst
}
