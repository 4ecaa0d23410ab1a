package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, []Tensor{
		{Name: "a.weight", Shape: []int{2, 3}, F32: []float32{1, 2, 3, 4, 5, 6}},
		{Name: "half", Shape: []int{2}, F32: []float32{0.5, -2}, Dtype: "F16"},
		{Name: "codes", Shape: []int{3}, Dtype: "I8", Data: []byte{1, 0xff, 3}},
		{Name: "scalar", Shape: nil, F32: []float32{7}},
	}, map[string]string{"format": "pt"}))
	n := binary.LittleEndian.Uint64(buf.Bytes())
	assert.Zero(t, (8+n)%8, "the data starts 8-byte aligned")

	path := filepath.Join(t.TempDir(), "model.safetensors")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, []string{"a.weight", "codes", "half", "scalar"}, f.Names())
	assert.Equal(t, map[string]string{"format": "pt"}, f.Metadata)

	v, shape, err := f.Float32("a.weight")
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, shape)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, v)
	v, _, err = f.Float32("half")
	require.NoError(t, err)
	assert.Equal(t, []float32{0.5, -2}, v)
	v, shape, err = f.Float32("scalar")
	require.NoError(t, err)
	assert.Equal(t, []float32{7}, v)
	assert.Empty(t, shape)

	part := make([]float32, 3)
	require.NoError(t, f.Float32Range("a.weight", 2, part))
	assert.Equal(t, []float32{3, 4, 5}, part)
	require.NoError(t, f.Float32Range("half", 1, part[:1]))
	assert.Equal(t, float32(-2), part[0])
	assert.ErrorContains(t, f.Float32Range("a.weight", 4, part), "outside its 6")

	info, raw, err := f.Raw("codes")
	require.NoError(t, err)
	assert.Equal(t, "I8", info.Dtype)
	assert.Equal(t, []byte{1, 0xff, 3}, raw)
	_, _, err = f.Float32("codes")
	assert.ErrorContains(t, err, "dtype I8")
}

func TestBFloat16(t *testing.T) {
	header := `{"x":{"dtype":"BF16","shape":[1,2],"data_offsets":[0,4]},"other":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`
	file := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	file = append(file, header...)
	file = binary.LittleEndian.AppendUint16(file, 0x3f80) // 1.0
	file = binary.LittleEndian.AppendUint16(file, 0xc000) // -2.0
	file = binary.LittleEndian.AppendUint32(file, 0)
	f, err := Parse(file)
	require.NoError(t, err)
	v, shape, err := f.Float32("x")
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, shape)
	assert.Equal(t, []float32{1, -2}, v)
	_, _, err = f.Float32("weights")
	assert.ErrorContains(t, err, `no tensor "weights" (the file has [other x])`)
}

func TestMalformed(t *testing.T) {
	header := func(h string, body int) []byte {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
		return append(append(b, h...), make([]byte, body)...)
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"short", []byte("abc"), "too short"},
		{"header past the end", binary.LittleEndian.AppendUint64(nil, 1000), "header longer than the file"},
		{"not json", header("{", 0), "malformed safetensors header"},
		{"bad entry", header(`{"x":1}`, 0), `malformed entry for tensor "x"`},
		{"offsets past the end", header(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4), "do not fit"},
		{"offsets not the shape", header(`{"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8), "do not fit"},
		{"negative offset", header(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}}`, 8), "do not fit"},
		{"huge shape", header(`{"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, 8), "larger than the file"},
		{"bad metadata", header(`{"__metadata__":{"a":1}}`, 0), "malformed safetensors metadata"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.data)
			assert.ErrorContains(t, err, c.want)
		})
	}
	_, err := Open(filepath.Join(t.TempDir(), "missing.safetensors"))
	assert.Error(t, err)

	var buf bytes.Buffer
	err = Write(&buf, []Tensor{{Name: "x", Shape: []int{3}, F32: []float32{1, 2}}}, nil)
	assert.ErrorContains(t, err, `tensor "x": 8 bytes of F32 do not fit shape [3]`)
}

func FuzzParse(f *testing.F) {
	var buf bytes.Buffer
	_ = Write(&buf, []Tensor{{Name: "x", Shape: []int{2}, F32: []float32{1, 2}}, {Name: "y", Shape: []int{1}, Dtype: "F16", F32: []float32{3}}}, nil)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := Parse(data)
		if err != nil {
			return
		}
		for _, name := range sf.Names() {
			_, _, _ = sf.Float32(name) // must not panic
		}
	})
}

func TestFloat16(t *testing.T) {
	// Every half that is a number survives the trip through float32.
	for h := range 1 << 16 {
		f := FromHalf(uint16(h))
		if f != f {
			continue // NaN
		}
		require.Equal(t, uint16(h), ToHalf(f), "half %#04x = %g", h, f)
	}
	cases := []struct {
		in   float32
		want uint16
	}{
		{1, 0x3c00},
		{-2, 0xc000},
		{65504, 0x7bff},
		{65520, 0x7c00}, // rounds up to infinity
		{1e6, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
		{5.960464477539063e-08, 0x0001}, // smallest subnormal
		{2.9e-08, 0x0000},               // below half of it
		{1 + 1.0/2048, 0x3c00},          // a tie rounds to even
		{1 + 3.0/2048, 0x3c02},
		{0.1, 0x2e66},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, ToHalf(c.in), "%g", c.in)
	}
	assert.True(t, math.IsNaN(float64(FromHalf(ToHalf(float32(math.NaN()))))))
}
