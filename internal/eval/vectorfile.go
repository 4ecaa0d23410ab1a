package eval

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// A vector file holds a collection's rows and its held-out queries as
// float32, so that the vector bench (sagasu bench --vectors N
// --vectors-from FILE) and other engines (FAISS, say) read the very same
// vectors. Its layout, little-endian, readable with numpy
// (np.fromfile(path, dtype="<f4", offset=32)):
//
//	magic "SGSUVEC1", dim (uint32), zero (uint32), rows (uint64), queries (uint64)
//	rows × dim float32, then queries × dim float32
const vectorFileMagic = "SGSUVEC1"

// VectorFileHeader is the size of a vector file's header in bytes.
const VectorFileHeader = 32

// WriteVectorFile writes rows and queries (all of one length) to path.
func WriteVectorFile(path string, rows, queries [][]float32) error {
	dim := 0
	switch {
	case len(rows) > 0:
		dim = len(rows[0])
	case len(queries) > 0:
		dim = len(queries[0])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write vectors: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var h [VectorFileHeader]byte
	copy(h[:], vectorFileMagic)
	binary.LittleEndian.PutUint32(h[8:], uint32(dim))
	binary.LittleEndian.PutUint64(h[16:], uint64(len(rows)))
	binary.LittleEndian.PutUint64(h[24:], uint64(len(queries)))
	w.Write(h[:])
	buf := make([]byte, 4*dim)
	for _, set := range [][][]float32{rows, queries} {
		for i, v := range set {
			if len(v) != dim {
				f.Close()
				return fmt.Errorf("write vectors to %s: vector %d has %d dimensions, not %d", path, i, len(v), dim)
			}
			for j, x := range v {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(x))
			}
			w.Write(buf)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write vectors to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write vectors to %s: %w", path, err)
	}
	return nil
}

// IsVectorFile reports whether path starts like a vector file.
func IsVectorFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var m [len(vectorFileMagic)]byte
	_, err = io.ReadFull(f, m[:])
	return err == nil && string(m[:]) == vectorFileMagic
}

// ReadVectorFile reads a file written by WriteVectorFile.
func ReadVectorFile(path string) (rows, queries [][]float32, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read vectors: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var h [VectorFileHeader]byte
	if _, err := io.ReadFull(r, h[:]); err != nil || string(h[:8]) != vectorFileMagic {
		return nil, nil, fmt.Errorf("read vectors: %s is not a vector file (make one with scripts/vecdata)", path)
	}
	dim := int(binary.LittleEndian.Uint32(h[8:]))
	nr, nq := binary.LittleEndian.Uint64(h[16:]), binary.LittleEndian.Uint64(h[24:])
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("read vectors: %w", err)
	}
	if dim < 1 || dim > 1<<16 || nr > 1<<32 || nq > 1<<32 || st.Size() != VectorFileHeader+int64(nr+nq)*int64(dim)*4 {
		return nil, nil, fmt.Errorf("read vectors: %s: its header (%d rows and %d queries of %d dimensions) does not match its size %d", path, nr, nq, dim, st.Size())
	}
	read := func(n uint64) ([][]float32, error) {
		out := make([][]float32, n)
		buf := make([]byte, 4*dim)
		for i := range out {
			if _, err := io.ReadFull(r, buf); err != nil {
				return nil, err
			}
			v := make([]float32, dim)
			for j := range v {
				v[j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
			}
			out[i] = v
		}
		return out, nil
	}
	if rows, err = read(nr); err == nil {
		queries, err = read(nq)
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = fmt.Errorf("cut short")
		}
		return nil, nil, fmt.Errorf("read vectors from %s: %w", path, err)
	}
	return rows, queries, nil
}
