// Package safetensors reads and writes the safetensors format that Hugging
// Face models ship their weights in: 8 bytes of little-endian header length,
// a JSON header mapping each tensor's name to its dtype, shape and byte
// range, then the raw little-endian data. Tensors are read one at a time, so
// loading a model holds the file's header and the tensors asked for, never
// the whole file twice.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"unsafe"

	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// maxHeader bounds the JSON header: real ones are a few hundred kilobytes.
const maxHeader = 100 << 20

// Info describes one tensor of a file.
type Info struct {
	Name  string
	Dtype string // "F32", "F16", "BF16", "I8", ...
	Shape []int
	start int64 // byte range in the data section
	end   int64
}

// Len is the number of values: the product of the shape.
func (t Info) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// width is the size in bytes of one value of each dtype this package knows.
var width = map[string]int{"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}

// File is an open safetensors file.
type File struct {
	r        io.ReaderAt
	closer   io.Closer
	base     int64 // offset of the data section
	tensors  map[string]Info
	Metadata map[string]string // the optional "__metadata__" entry
}

// Open opens a safetensors file and reads its header. It opens only a
// regular file (see userfile.OpenRegular).
func Open(path string) (*File, error) {
	f, err := userfile.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	sf, err := read(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sf.closer = f
	return sf, nil
}

// Parse reads a safetensors file held in memory.
func Parse(data []byte) (*File, error) {
	return read(bytes.NewReader(data), int64(len(data)))
}

func read(r io.ReaderAt, size int64) (*File, error) {
	var head [8]byte
	if size < 8 {
		return nil, errors.New("not a safetensors file: too short")
	}
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(head[:])
	if n > uint64(size-8) || n > maxHeader {
		return nil, errors.New("not a safetensors file: header longer than the file")
	}
	raw := make([]byte, n)
	if _, err := r.ReadAt(raw, 8); err != nil {
		return nil, err
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw, &header); err != nil {
		return nil, fmt.Errorf("malformed safetensors header: %w", err)
	}
	f := &File{r: r, base: 8 + int64(n), tensors: make(map[string]Info, len(header))}
	dataLen := size - f.base
	for name, entry := range header {
		if name == "__metadata__" {
			if err := json.Unmarshal(entry, &f.Metadata); err != nil {
				return nil, fmt.Errorf("malformed safetensors metadata: %w", err)
			}
			continue
		}
		var t struct {
			Dtype   string   `json:"dtype"`
			Shape   []int    `json:"shape"`
			Offsets [2]int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(entry, &t); err != nil {
			return nil, fmt.Errorf("malformed entry for tensor %q: %w", name, err)
		}
		info := Info{Name: name, Dtype: t.Dtype, Shape: t.Shape, start: t.Offsets[0], end: t.Offsets[1]}
		w := width[t.Dtype]
		n := int64(1)
		for _, d := range t.Shape {
			if d < 0 || (d > 0 && n > dataLen/int64(d)) {
				return nil, fmt.Errorf("tensor %q has shape %v, larger than the file", name, t.Shape)
			}
			n *= int64(d)
		}
		if w > 0 && info.end-info.start != n*int64(w) || info.start < 0 || info.end < info.start || info.end > dataLen {
			return nil, fmt.Errorf("tensor %q: offsets %v do not fit its shape %v or the file", name, t.Offsets, t.Shape)
		}
		f.tensors[name] = info
	}
	return f, nil
}

// Close closes the file Open opened.
func (f *File) Close() error {
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

// Names lists the tensors, sorted.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.tensors))
	for n := range f.tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Info describes the tensor name.
func (f *File) Info(name string) (Info, bool) {
	t, ok := f.tensors[name]
	return t, ok
}

// lookup returns the tensor name or an error that lists what there is.
func (f *File) lookup(name string) (Info, error) {
	t, ok := f.tensors[name]
	if !ok {
		names := f.Names()
		if len(names) > 12 {
			names = append(names[:12:12], fmt.Sprintf("... %d in all", len(f.tensors)))
		}
		return Info{}, fmt.Errorf("no tensor %q (the file has %v)", name, names)
	}
	return t, nil
}

// Raw returns the bytes of tensor name as stored.
func (f *File) Raw(name string) (Info, []byte, error) {
	t, err := f.lookup(name)
	if err != nil {
		return Info{}, nil, err
	}
	b := make([]byte, t.end-t.start)
	if _, err := f.r.ReadAt(b, f.base+t.start); err != nil {
		return Info{}, nil, fmt.Errorf("read tensor %q: %w", name, err)
	}
	return t, b, nil
}

// Float32 reads tensor name as float32 values in row-major order, from F32,
// F16 or BF16 data, and returns its shape.
func (f *File) Float32(name string) ([]float32, []int, error) {
	t, err := f.lookup(name)
	if err != nil {
		return nil, nil, err
	}
	out := make([]float32, t.Len())
	if err := f.Float32Range(name, 0, out); err != nil {
		return nil, nil, err
	}
	return out, slices.Clone(t.Shape), nil
}

// Float32Range reads len(dst) values of tensor name, starting at value
// from, into dst: a large tensor can be read a block of rows at a time.
// F32 data on a little-endian machine is read straight into dst, with no
// copy of the bytes.
func (f *File) Float32Range(name string, from int, dst []float32) error {
	t, err := f.lookup(name)
	if err != nil {
		return err
	}
	w := map[string]int{"F32": 4, "F16": 2, "BF16": 2}[t.Dtype]
	if w == 0 {
		return fmt.Errorf("tensor %q has dtype %s; F32, F16 and BF16 are read", name, t.Dtype)
	}
	if from < 0 || from+len(dst) > t.Len() {
		return fmt.Errorf("tensor %q: values [%d, %d) are outside its %d", name, from, from+len(dst), t.Len())
	}
	if len(dst) == 0 {
		return nil
	}
	off := f.base + t.start + int64(from*w)
	if t.Dtype == "F32" && littleEndian {
		b := unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 4*len(dst))
		if _, err := f.r.ReadAt(b, off); err != nil {
			return fmt.Errorf("read tensor %q: %w", name, err)
		}
		return nil
	}
	b := make([]byte, w*len(dst))
	if _, err := f.r.ReadAt(b, off); err != nil {
		return fmt.Errorf("read tensor %q: %w", name, err)
	}
	switch t.Dtype {
	case "F32":
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case "F16":
		for i := range dst {
			dst[i] = FromHalf(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case "BF16":
		for i := range dst {
			dst[i] = FromBFloat16(binary.LittleEndian.Uint16(b[2*i:]))
		}
	}
	return nil
}

// littleEndian reports the machine's byte order: float32 values read
// straight from the file need it to be the file's.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// Tensor is one tensor to write: F32 values, or raw bytes of another dtype.
type Tensor struct {
	Name  string
	Shape []int
	F32   []float32 // written as F32 when Dtype is "" or "F32", as F16 when "F16"
	Dtype string
	Data  []byte // the raw bytes of any other dtype
}

// Write writes tensors (and metadata, if any) as a safetensors file, in the
// order given.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	header := make(map[string]any, len(tensors)+1)
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	bodies := make([][]byte, len(tensors))
	var off int64
	for i, t := range tensors {
		dtype, body := t.Dtype, t.Data
		switch {
		case t.F32 != nil && (dtype == "" || dtype == "F32"):
			dtype, body = "F32", make([]byte, 0, 4*len(t.F32))
			for _, x := range t.F32 {
				body = binary.LittleEndian.AppendUint32(body, math.Float32bits(x))
			}
		case t.F32 != nil && dtype == "F16":
			body = make([]byte, 0, 2*len(t.F32))
			for _, x := range t.F32 {
				body = binary.LittleEndian.AppendUint16(body, ToHalf(x))
			}
		}
		if w := width[dtype]; w == 0 || int64(len(body)) != int64(Info{Shape: t.Shape}.Len()*w) {
			return fmt.Errorf("tensor %q: %d bytes of %s do not fit shape %v", t.Name, len(body), dtype, t.Shape)
		}
		bodies[i] = body
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		header[t.Name] = map[string]any{"dtype": dtype, "shape": shape, "data_offsets": [2]int64{off, off + int64(len(body))}}
		off += int64(len(body))
	}
	raw, err := json.Marshal(header)
	if err != nil {
		return err
	}
	// Pad the header with spaces so the data starts 8-byte aligned.
	for (8+len(raw))%8 != 0 {
		raw = append(raw, ' ')
	}
	if _, err := w.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(raw)))); err != nil {
		return err
	}
	if _, err := w.Write(raw); err != nil {
		return err
	}
	for _, b := range bodies {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
