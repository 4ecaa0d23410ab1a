package static

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
)

// hasTensor reports whether a safetensors file names a tensor name.
func hasTensor(data []byte, name string) bool {
	if len(data) < 8 {
		return false
	}
	n := binary.LittleEndian.Uint64(data)
	if n > uint64(len(data)-8) {
		return false
	}
	var header map[string]json.RawMessage
	if json.Unmarshal(data[8:8+n], &header) != nil {
		return false
	}
	_, ok := header[name]
	return ok
}

// tensor reads the 2-D tensor name from a safetensors file: 8 bytes of
// little-endian header length, a JSON header mapping names to dtype, shape
// and byte offsets, then the data. F32, F16 and BF16 are read.
func tensor(data []byte, name string) (rows, cols int, out []float32, err error) {
	if len(data) < 8 {
		return 0, 0, nil, errors.New("not a safetensors file: too short")
	}
	n := binary.LittleEndian.Uint64(data)
	if n > uint64(len(data)-8) {
		return 0, 0, nil, errors.New("not a safetensors file: header longer than the file")
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+n], &header); err != nil {
		return 0, 0, nil, fmt.Errorf("malformed safetensors header: %w", err)
	}
	raw, ok := header[name]
	if !ok {
		var names []string
		for k := range header {
			if k != "__metadata__" {
				names = append(names, k)
			}
		}
		slices.Sort(names)
		return 0, 0, nil, fmt.Errorf("no tensor %q (the file has %v)", name, names)
	}
	var t struct {
		Dtype   string   `json:"dtype"`
		Shape   []int    `json:"shape"`
		Offsets [2]int64 `json:"data_offsets"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return 0, 0, nil, fmt.Errorf("malformed entry for tensor %q: %w", name, err)
	}
	if len(t.Shape) != 2 || t.Shape[0] <= 0 || t.Shape[1] <= 0 {
		return 0, 0, nil, fmt.Errorf("tensor %q has shape %v, want [vocabulary, dimensions]", name, t.Shape)
	}
	rows, cols = t.Shape[0], t.Shape[1]
	body := data[8+n:]
	width := map[string]int{"F32": 4, "F16": 2, "BF16": 2}[t.Dtype]
	if width == 0 {
		return 0, 0, nil, fmt.Errorf("tensor %q has dtype %s; F32, F16 and BF16 are read", name, t.Dtype)
	}
	start, end := t.Offsets[0], t.Offsets[1]
	if start < 0 || end > int64(len(body)) || end-start != int64(rows*cols*width) {
		return 0, 0, nil, fmt.Errorf("tensor %q: offsets %v do not fit its shape or the file", name, t.Offsets)
	}
	b := body[start:end]
	out = make([]float32, rows*cols)
	for i := range out {
		switch t.Dtype {
		case "F32":
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		case "F16":
			out[i] = float32From16(binary.LittleEndian.Uint16(b[2*i:]))
		case "BF16":
			out[i] = float32FromB16(binary.LittleEndian.Uint16(b[2*i:]))
		}
	}
	return rows, cols, out, nil
}
