package static

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/embed/safetensors"
	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// Vectors is a table of word vectors, most frequent word first.
type Vectors struct {
	Source string    // where the vectors came from, free text
	Dim    int       // floats per word
	Words  []string  // the words, most frequent first
	Data   []float32 // len(Words)*Dim floats; row i belongs to Words[i]
	Prob   []float32 // each word's estimated probability, for SIF weights
}

// Vector is the row of word i.
func (v *Vectors) Vector(i int) []float32 { return v.Data[i*v.Dim : (i+1)*v.Dim] }

// ZipfProb estimates the probabilities of n words listed most frequent
// first by Zipf's law: p(rank r) = 1 / (r * H(n)), H the harmonic number.
func ZipfProb(n int) []float32 {
	var h float64
	for r := 1; r <= n; r++ {
		h += 1 / float64(r)
	}
	p := make([]float32, n)
	for i := range p {
		p[i] = float32(1 / (float64(i+1) * h))
	}
	return p
}

// ReadText reads word vectors in GloVe text format ("word v1 v2 ...", one
// word a line) or word2vec text format (the same after a first line
// "count dim"). Words must come most frequent first, as in both projects'
// files; probabilities are then estimated with ZipfProb. A word seen twice
// keeps its first vector.
func ReadText(r io.Reader) (*Vectors, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	v := &Vectors{}
	seen := make(map[string]bool)
	wantCount := -1
	line, rows := 0, 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if line == 1 && len(fields) == 2 {
			n, err1 := strconv.Atoi(fields[0])
			d, err2 := strconv.Atoi(fields[1])
			if err1 == nil && err2 == nil && n >= 0 && d > 0 {
				wantCount, v.Dim = n, d // word2vec header
				continue
			}
		}
		if v.Dim == 0 {
			v.Dim = len(fields) - 1
			if v.Dim < 1 {
				return nil, fmt.Errorf("line %d: want a word and its vector, got %q", line, sc.Text())
			}
		}
		if len(fields) < v.Dim+1 {
			return nil, fmt.Errorf("line %d: want a word and %d numbers, got %d fields", line, v.Dim, len(fields))
		}
		// A few GloVe files have words with spaces in them: the numbers are
		// the last Dim fields and the rest is the word.
		word := strings.Join(fields[:len(fields)-v.Dim], " ")
		nums := fields[len(fields)-v.Dim:]
		rows++
		if seen[word] {
			continue
		}
		seen[word] = true
		for _, s := range nums {
			x, err := strconv.ParseFloat(s, 32)
			if err != nil {
				return nil, fmt.Errorf("line %d (word %q): %q is not a number", line, word, s)
			}
			v.Data = append(v.Data, float32(x))
		}
		v.Words = append(v.Words, word)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(v.Words) == 0 {
		return nil, errors.New("no word vectors found")
	}
	if wantCount >= 0 && wantCount != rows {
		return nil, fmt.Errorf("the header says %d words but the file has %d", wantCount, rows)
	}
	v.Prob = ZipfProb(len(v.Words))
	return v, nil
}

// The compact binary format. All numbers are little-endian.
//
//	magic    8 bytes   "SAGASUWV"
//	version  uint32    1
//	flags    uint32    bit 0: vectors are float16 (else float32)
//	dim      uint32    floats per word
//	count    uint32    number of words
//	source   uvarint length + UTF-8: where the vectors came from
//	words    count × (uvarint length + UTF-8), most frequent first
//	probs    count × float32: each word's estimated probability
//	vectors  count × dim × float16 or float32, in word order
//	crc      uint32    CRC-32 (Castagnoli) of every byte before it
const (
	magic       = "SAGASUWV"
	version     = 1
	flagFloat16 = 1 << 0
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteBinary writes v in sagasu's compact binary format, with float16
// vectors when half is true (half the size; GloVe-like values keep about
// three significant digits) and float32 otherwise.
func (v *Vectors) WriteBinary(w io.Writer, half bool) error {
	if err := v.check(); err != nil {
		return err
	}
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	var flags uint32
	if half {
		flags |= flagFloat16
	}
	bw.WriteString(magic)
	for _, n := range []uint32{version, flags, uint32(v.Dim), uint32(len(v.Words))} {
		bw.Write(binary.LittleEndian.AppendUint32(nil, n))
	}
	var buf []byte
	writeString := func(s string) {
		buf = binary.AppendUvarint(buf[:0], uint64(len(s)))
		bw.Write(buf)
		bw.WriteString(s)
	}
	writeString(v.Source)
	for _, word := range v.Words {
		writeString(word)
	}
	for _, p := range v.Prob {
		buf = binary.LittleEndian.AppendUint32(buf[:0], math.Float32bits(p))
		bw.Write(buf)
	}
	for _, x := range v.Data {
		if half {
			buf = binary.LittleEndian.AppendUint16(buf[:0], safetensors.ToHalf(x))
		} else {
			buf = binary.LittleEndian.AppendUint32(buf[:0], math.Float32bits(x))
		}
		bw.Write(buf)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

func (v *Vectors) check() error {
	switch {
	case v.Dim <= 0:
		return fmt.Errorf("dimension %d is not positive", v.Dim)
	case len(v.Data) != len(v.Words)*v.Dim:
		return fmt.Errorf("%d floats for %d words of %d dimensions", len(v.Data), len(v.Words), v.Dim)
	case len(v.Prob) != len(v.Words):
		return fmt.Errorf("%d probabilities for %d words", len(v.Prob), len(v.Words))
	}
	return nil
}

// ReadBinary reads vectors written by WriteBinary.
func ReadBinary(data []byte) (*Vectors, error) {
	if len(data) < len(magic)+20 || string(data[:len(magic)]) != magic {
		return nil, errors.New("not a sagasu word-vector file (bad magic)")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, errors.New("the file is damaged or cut short (checksum mismatch)")
	}
	r := &byteReader{b: body[len(magic):]}
	ver, flags, dim, count := r.u32(), r.u32(), int(r.u32()), int(r.u32())
	if ver != version {
		return nil, fmt.Errorf("format version %d, this sagasu reads version %d", ver, version)
	}
	if dim <= 0 || dim > 1<<16 || count > len(body) {
		return nil, fmt.Errorf("implausible header: %d words of %d dimensions", count, dim)
	}
	v := &Vectors{Dim: dim, Source: r.str()}
	// One string holds all words; each word is a slice of it.
	start := r.off
	lens := make([]int, count)
	for i := range lens {
		lens[i] = int(r.uvarint())
		r.skip(lens[i])
	}
	if r.err != nil {
		return nil, r.err
	}
	all := string(body[len(magic)+start : len(magic)+r.off])
	v.Words = make([]string, count)
	pos := 0
	for i, n := range lens {
		pos += uvarintLen(uint64(n))
		v.Words[i] = all[pos : pos+n]
		pos += n
	}
	v.Prob = make([]float32, count)
	for i := range v.Prob {
		v.Prob[i] = math.Float32frombits(r.u32())
	}
	width := 4
	if flags&flagFloat16 != 0 {
		width = 2
	}
	raw := r.take(count * dim * width)
	if r.err != nil {
		return nil, r.err
	}
	if r.off != len(r.b) {
		return nil, fmt.Errorf("%d unexpected bytes after the vectors", len(r.b)-r.off)
	}
	v.Data = make([]float32, count*dim)
	if width == 2 {
		for i := range v.Data {
			v.Data[i] = safetensors.FromHalf(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	} else {
		for i := range v.Data {
			v.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	return v, nil
}

func uvarintLen(x uint64) int { return len(binary.AppendUvarint(nil, x)) }

// byteReader reads the binary format; the first error sticks.
type byteReader struct {
	b   []byte
	off int
	err error
}

var errShort = errors.New("the file is cut short")

func (r *byteReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.off {
		r.err = errShort
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *byteReader) skip(n int) { r.take(n) }

func (r *byteReader) u32() uint32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *byteReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	x, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.off += n
	return x
}

func (r *byteReader) str() string { return string(r.take(int(r.uvarint()))) }

// MaxFile is the largest word-vector file ReadFile reads: 8 GiB, more than
// GloVe's 840B 300-dimension text (5.6 GB).
const MaxFile = 8 << 30

// ReadFile reads a word-vector file in any format this package knows:
// sagasu's binary, word2vec text or GloVe text.
// It reads only a regular file of at most MaxFile bytes (see
// userfile.ReadRegular): a setting naming /dev/zero would never end.
func ReadFile(path string) (*Vectors, error) {
	data, err := userfile.ReadRegular(path, MaxFile)
	if err != nil {
		return nil, err
	}
	var v *Vectors
	if bytes.HasPrefix(data, []byte(magic)) {
		v, err = ReadBinary(data)
	} else {
		v, err = ReadText(bytes.NewReader(data))
		if err == nil {
			v.Source = filepath.Base(path)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("read word vectors %s: %w", path, err)
	}
	return v, nil
}

// Import converts a word-vector file (GloVe or word2vec text, or sagasu's
// binary) into sagasu's compact binary format with float16 vectors, which
// loads several times faster than text and is about a quarter of its size.
// dstPath is written whole or not at all.
func Import(srcPath, dstPath string) error {
	v, err := ReadFile(srcPath)
	if err != nil {
		return err
	}
	return WriteFile(dstPath, v, true)
}

// WriteFile writes v to path in the binary format through a temporary file
// and a rename, so that a reader never sees half a file.
func WriteFile(path string, v *Vectors, half bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write word vectors: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := v.WriteBinary(tmp, half); err != nil {
		tmp.Close()
		return fmt.Errorf("write word vectors %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write word vectors %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write word vectors %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write word vectors %s: %w", path, err)
	}
	return nil
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
