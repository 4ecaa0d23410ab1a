// Command gen writes the IPA dictionary that kagome-dict/ipa embeds (as a
// zip of gob and binary parts that take a second and 86 MB to decode) in the
// flat layout package ipadic reads in place: run by go generate in
// internal/analyze/ipadic.
//
//	go run ./gen -o ipadic.bin
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"

	"github.com/ikawaha/kagome-dict/dict"
	"github.com/ikawaha/kagome-dict/ipa"
)

// The section order and the header layout must match ipadic.go.
const (
	magic   = "SGIPADIC"
	version = 1
)

// Part-of-speech kinds, as ipadic.go names them.
const (
	kindOther     = 0 // particles, auxiliaries, symbols, ...
	kindNoun      = 1 // nouns that can carry content
	kindInflected = 2 // independent verbs and adjectives
	kindInterject = 3 // interjections (こんにちは, ありがとう)
)

func main() {
	out := flag.String("o", "ipadic.bin", "output file")
	flag.Parse()
	if err := run(*out); err != nil {
		log.Fatal(err)
	}
}

func run(out string) error {
	d := ipa.DictShrink()
	var sections [][]byte

	// 0: the double-array trie of surfaces, (base, check) int32 pairs.
	da := new(bytes.Buffer)
	for _, e := range d.Index.Da {
		put(da, e.Base, e.Check)
	}
	sections = append(sections, da.Bytes())

	// 1: per word ID, how many more IDs share its surface (the trie holds
	// the first).
	if len(d.Morphs) > 1<<31 {
		return fmt.Errorf("too many words: %d", len(d.Morphs))
	}
	dup := make([]byte, len(d.Morphs))
	for id, n := range d.Index.Dup {
		if n > 255 {
			return fmt.Errorf("word %d has %d duplicates, more than a byte holds", id, n)
		}
		dup[id] = byte(n)
	}
	sections = append(sections, dup)

	// 2: per word, its left and right context IDs and its cost.
	sections = append(sections, morphs(d.Morphs))

	// 3: per word, its kind of part of speech (what analyze needs of it).
	kinds := make([]byte, len(d.Morphs))
	for id, ids := range d.POSTable.POSs {
		var pos, sub string
		if len(ids) > 0 {
			pos = d.POSTable.NameList[ids[0]]
		}
		if len(ids) > 1 {
			sub = d.POSTable.NameList[ids[1]]
		}
		kinds[id] = kind(pos, sub)
	}
	sections = append(sections, kinds)

	// 4: the connection costs, int16, indexed [right*? ...] as kagome does:
	// Vec[Row*left + right].
	conn := new(bytes.Buffer)
	for _, v := range d.Connection.Vec {
		put(conn, v)
	}
	sections = append(sections, conn.Bytes())

	// 5: the character category of each rune below len (65536).
	sections = append(sections, []byte(d.CharCategory))

	// 6, 7: per category, whether to invoke unknown-word processing and
	// whether to group a run of it into one unknown word.
	sections = append(sections, bools(d.InvokeList), bools(d.GroupList))

	// 8, 9: per category, the first unknown-word ID and its duplicates.
	ncat := len(d.CharClass)
	unkIndex, unkDup := new(bytes.Buffer), new(bytes.Buffer)
	for c := range ncat {
		put(unkIndex, d.UnkDict.Index[int32(c)])
		put(unkDup, d.UnkDict.IndexDup[int32(c)])
	}
	sections = append(sections, unkIndex.Bytes(), unkDup.Bytes())

	// 10: per unknown word, its context IDs and cost.
	sections = append(sections, morphs(d.UnkDict.Morphs))

	// The header: magic, version, section count, connection rows and
	// columns, then each section's offset and length; every section starts
	// at a multiple of 8.
	headerLen := 8 + 4*8 + len(sections)*16
	var body bytes.Buffer
	offsets := make([][2]uint64, len(sections))
	off := uint64(headerLen)
	for i, s := range sections {
		for off%8 != 0 {
			body.WriteByte(0)
			off++
		}
		offsets[i] = [2]uint64{off, uint64(len(s))}
		body.Write(s)
		off += uint64(len(s))
	}
	var all bytes.Buffer
	all.WriteString(magic)
	put(&all, uint64(version), uint64(len(sections)), uint64(d.Connection.Row), uint64(d.Connection.Col))
	for _, o := range offsets {
		put(&all, o[0], o[1])
	}
	if all.Len() != headerLen {
		return fmt.Errorf("header is %d bytes, want %d", all.Len(), headerLen)
	}
	all.Write(body.Bytes())
	return os.WriteFile(out, all.Bytes(), 0o644)
}

// kind classifies a part of speech as analyze's contentWord reads it.
func kind(pos, sub string) byte {
	switch pos {
	case "名詞":
		if slices.Contains([]string{"非自立", "代名詞", "接尾", "特殊"}, sub) {
			return kindOther
		}
		return kindNoun
	case "動詞", "形容詞":
		if sub == "自立" {
			return kindInflected
		}
	case "感動詞":
		return kindInterject
	}
	return kindOther
}

func morphs(ms dict.Morphs) []byte {
	b := new(bytes.Buffer)
	for _, m := range ms {
		put(b, m.LeftID, m.RightID, m.Weight)
	}
	return b.Bytes()
}

func bools(bs []bool) []byte {
	out := make([]byte, len(bs))
	for i, v := range bs {
		if v {
			out[i] = 1
		}
	}
	return out
}

func put(b *bytes.Buffer, vs ...any) {
	for _, v := range vs {
		if err := binary.Write(b, binary.LittleEndian, v); err != nil {
			panic(err)
		}
	}
}
