package local

import (
	"fmt"
	"math"

	"github.com/sagasu-dev/sagasu/internal/embed/safetensors"
)

// model holds a BERT-family encoder's weights, the linear layers packed
// for the kernel.
type model struct {
	s       *settings
	word    []float32 // vocab × hidden; nil when quantised
	wordQ   []int8    // the same as int8, one scale per row
	wordS   []float32
	pos     []float32 // positions × hidden
	typ     []float32 // token type 0's row
	embNorm norm
	layers  []layer
}

type layer struct {
	qkv      linear // query, key and value in one product: 3·hidden outputs
	attnOut  linear
	attnNorm norm
	inter    linear
	out      linear
	outNorm  norm
}

type linear struct {
	w    packed
	bias []float32
}

type norm struct{ gain, bias []float32 }

// loadModel reads the encoder's tensors. Names may carry a "bert." or
// "roberta." prefix, as checkpoints saved with a task head do. With int8,
// each weight matrix is quantised as soon as it is read, and the word
// table a block of rows at a time, so the float weights are never all in
// memory at once.
func loadModel(f *safetensors.File, s *settings, int8 bool) (*model, error) {
	prefix := ""
	for _, p := range []string{"", "bert.", "roberta.", "model."} {
		if _, ok := f.Info(p + "embeddings.word_embeddings.weight"); ok {
			prefix = p
			break
		}
	}
	h := s.Hidden
	check := func(name string, shape []int) (int, error) {
		info, ok := f.Info(prefix + name)
		if !ok {
			_, _, err := f.Float32(prefix + name) // the error lists what there is
			return 0, fmt.Errorf("model.safetensors: %w", err)
		}
		if !sameShape(info.Shape, shape) {
			return 0, fmt.Errorf("model.safetensors: tensor %q has shape %v, config.json implies %v", prefix+name, info.Shape, shape)
		}
		return info.Len(), nil
	}
	get := func(name string, shape ...int) ([]float32, error) {
		n, err := check(name, shape)
		if err != nil {
			return nil, err
		}
		v := make([]float32, n)
		if err := f.Float32Range(prefix+name, 0, v); err != nil {
			return nil, fmt.Errorf("model.safetensors: %w", err)
		}
		return v, nil
	}
	// Weight matrices are read into one buffer, reused, and packed from it.
	var buf []float32
	getWeight := func(name string, at int, shape ...int) ([]float32, error) {
		n, err := check(name, shape)
		if err != nil {
			return nil, err
		}
		if cap(buf) < at+n {
			buf = append(buf[:at:at], make([]float32, n)...) // keeps buf[:at]
		}
		buf = buf[:at+n]
		if err := f.Float32Range(prefix+name, 0, buf[at:at+n]); err != nil {
			return nil, fmt.Errorf("model.safetensors: %w", err)
		}
		return buf[:at+n], nil
	}
	getNorm := func(name string) (norm, error) {
		// Old checkpoints call the LayerNorm's weight and bias gamma and beta.
		g, errG := get(name+".weight", h)
		if errG != nil {
			if alt, err := get(name+".gamma", h); err == nil {
				g, errG = alt, nil
			}
		}
		if errG != nil {
			return norm{}, errG
		}
		b, err := get(name+".bias", h)
		if err != nil {
			if alt, err2 := get(name+".beta", h); err2 == nil {
				b, err = alt, nil
			}
		}
		return norm{gain: g, bias: b}, err
	}
	m := &model{s: s}
	var err error
	info, ok := f.Info(prefix + "embeddings.word_embeddings.weight")
	if !ok || len(info.Shape) != 2 {
		return nil, fmt.Errorf("model.safetensors has no embeddings.word_embeddings.weight: is this a BERT-family encoder?")
	}
	vocab := info.Shape[0]
	if info.Shape[1] != h {
		return nil, fmt.Errorf("model.safetensors: tensor %q has shape %v, config.json implies [%d %d]", prefix+"embeddings.word_embeddings.weight", info.Shape, vocab, h)
	}
	if int8 {
		if err := m.loadWordsInt8(f, prefix+"embeddings.word_embeddings.weight", vocab); err != nil {
			return nil, fmt.Errorf("model.safetensors: %w", err)
		}
	} else if m.word, err = get("embeddings.word_embeddings.weight", vocab, h); err != nil {
		return nil, err
	}
	if m.pos, err = get("embeddings.position_embeddings.weight", s.MaxPositions, h); err != nil {
		return nil, err
	}
	typ, err := get("embeddings.token_type_embeddings.weight", s.TypeVocab, h)
	if err != nil {
		return nil, err
	}
	m.typ = typ[:h]
	if m.embNorm, err = getNorm("embeddings.LayerNorm"); err != nil {
		return nil, err
	}
	for i := 0; i < s.Layers; i++ {
		p := fmt.Sprintf("encoder.layer.%d.", i)
		var l layer
		var qkv []float32
		bias := make([]float32, 0, 3*h)
		for j, name := range []string{"query", "key", "value"} {
			if qkv, err = getWeight(p+"attention.self."+name+".weight", j*h*h, h, h); err != nil {
				return nil, err
			}
			b, err := get(p+"attention.self."+name+".bias", h)
			if err != nil {
				return nil, err
			}
			bias = append(bias, b...)
		}
		l.qkv = newLinear(qkv, bias, 3*h, h, int8)
		if l.attnOut, err = loadLinear(getWeight, get, p+"attention.output.dense", h, h, int8); err != nil {
			return nil, err
		}
		if l.attnNorm, err = getNorm(p + "attention.output.LayerNorm"); err != nil {
			return nil, err
		}
		if l.inter, err = loadLinear(getWeight, get, p+"intermediate.dense", s.Intermediate, h, int8); err != nil {
			return nil, err
		}
		if l.out, err = loadLinear(getWeight, get, p+"output.dense", h, s.Intermediate, int8); err != nil {
			return nil, err
		}
		if l.outNorm, err = getNorm(p + "output.LayerNorm"); err != nil {
			return nil, err
		}
		m.layers = append(m.layers, l)
	}
	return m, nil
}

func loadLinear(getWeight func(string, int, ...int) ([]float32, error), get func(string, ...int) ([]float32, error),
	name string, out, in int, int8 bool) (linear, error) {
	w, err := getWeight(name+".weight", 0, out, in)
	if err != nil {
		return linear{}, err
	}
	b, err := get(name+".bias", out)
	if err != nil {
		return linear{}, err
	}
	return newLinear(w, b, out, in, int8), nil
}

func newLinear(w, bias []float32, out, in int, int8 bool) linear {
	l := linear{bias: bias}
	if int8 {
		packRowsInt8(&l.w, w, out, in)
	} else {
		packRows(&l.w, w, out, in, in)
	}
	return l
}

func sameShape(got, want []int) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// vocabSize is the number of rows of the word embedding table.
func (m *model) vocabSize() int {
	if m.word == nil {
		return len(m.wordS)
	}
	return len(m.word) / m.s.Hidden
}

// loadWordsInt8 reads the word table a block of rows at a time and keeps
// it as int8 with one scale per row.
func (m *model) loadWordsInt8(f *safetensors.File, name string, rows int) error {
	h := m.s.Hidden
	m.wordQ = make([]int8, rows*h)
	m.wordS = make([]float32, rows)
	const block = 4096
	buf := make([]float32, block*h)
	for r0 := 0; r0 < rows; r0 += block {
		n := min(block, rows-r0)
		if err := f.Float32Range(name, r0*h, buf[:n*h]); err != nil {
			return err
		}
		for r := 0; r < n; r++ {
			m.wordS[r0+r] = quantizeRow(m.wordQ[(r0+r)*h:(r0+r+1)*h], buf[r*h:(r+1)*h])
		}
	}
	return nil
}

// quantizeRow writes row as int8 into dst, the largest magnitude mapping
// to 127, and returns the scale.
func quantizeRow(dst []int8, row []float32) float32 {
	var hi float32
	for _, v := range row {
		hi = max(hi, abs32(v))
	}
	if hi == 0 {
		clear(dst)
		return 0
	}
	s := hi / 127
	for j, v := range row {
		dst[j] = int8(roundHalfAway(v / s))
	}
	return s
}

// wordRow writes the embedding of token id into dst.
func (m *model) wordRow(dst []float32, id int32) {
	h := m.s.Hidden
	if m.word != nil {
		copy(dst, m.word[int(id)*h:int(id+1)*h])
		return
	}
	s := m.wordS[id]
	for j, q := range m.wordQ[int(id)*h : int(id+1)*h] {
		dst[j] = float32(q) * s
	}
}

// workspace holds one worker's activations, grown as needed.
type workspace struct {
	x, qkv, ctx, tmp, inter []float32
	scores, part            []float32
	keys, vals              packed
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// forward runs the encoder over a batch of token sequences and writes each
// one's pooled vector into out.
func (m *model) forward(ws *workspace, seqs [][]int32, out [][]float32) {
	s := m.s
	h := s.Hidden
	total := 0
	for _, q := range seqs {
		total += len(q)
	}
	rows := (total + mr - 1) / mr * mr
	// One block of slack rows: a sequence's attention reads whole blocks of
	// mr rows from where it starts.
	ws.x = grow(ws.x, (rows+mr)*h)
	ws.qkv = grow(ws.qkv, (rows+mr)*3*h)
	ws.ctx = grow(ws.ctx, (rows+mr)*h)
	ws.tmp = grow(ws.tmp, (rows+mr)*h)
	ws.inter = grow(ws.inter, (rows+mr)*s.Intermediate)
	clear(ws.x[total*h:])

	// Embeddings: word + position + token type 0, then LayerNorm.
	r := 0
	for _, q := range seqs {
		for p, id := range q {
			x := ws.x[r*h : (r+1)*h]
			m.wordRow(x, id)
			prow := m.pos[(p+s.posOffset)*h : (p+s.posOffset+1)*h]
			for j := range x {
				x[j] += prow[j] + m.typ[j]
			}
			r++
		}
	}
	layerNorm(ws.x[:total*h], h, m.embNorm, s.Eps)

	for li := range m.layers {
		l := &m.layers[li]
		m.apply(ws, &l.qkv, ws.qkv, ws.x, rows, 3*h, h)
		m.attention(ws, seqs)
		m.apply(ws, &l.attnOut, ws.tmp, ws.ctx, rows, h, h)
		addNorm(ws.x[:total*h], ws.tmp[:total*h], h, l.attnNorm, s.Eps)
		m.apply(ws, &l.inter, ws.inter, ws.x, rows, s.Intermediate, h)
		activate(ws.inter[:total*s.Intermediate], s.Act)
		m.apply(ws, &l.out, ws.tmp, ws.inter, rows, h, s.Intermediate)
		addNorm(ws.x[:total*h], ws.tmp[:total*h], h, l.outNorm, s.Eps)
	}

	r = 0
	for i, q := range seqs {
		pool(out[i], ws.x[r*h:(r+len(q))*h], h, s.pooling)
		r += len(q)
	}
}

// apply computes dst = src·Wᵀ + bias for rows rows.
func (m *model) apply(ws *workspace, l *linear, dst, src []float32, rows, out, in int) {
	for r := 0; r < rows; r++ {
		copy(dst[r*out:(r+1)*out], l.bias)
	}
	gemm(dst, out, src, in, rows, &l.w)
}

// attention runs each sequence's self-attention, head by head, from the
// queries, keys and values in ws.qkv into ws.ctx.
func (m *model) attention(ws *workspace, seqs [][]int32) {
	h := m.s.Hidden
	heads := m.s.Heads
	d := h / heads
	scale := float32(1 / math.Sqrt(float64(d)))
	r0 := 0
	for _, q := range seqs {
		n := len(q)
		rows := (n + mr - 1) / mr * mr
		ld := (n + nr - 1) / nr * nr
		ws.scores = grow(ws.scores, rows*ld)
		ws.part = grow(ws.part, rows*d)
		for hd := 0; hd < heads; hd++ {
			qs := ws.qkv[r0*3*h+hd*d:]
			ks := ws.qkv[r0*3*h+h+hd*d:]
			vs := ws.qkv[r0*3*h+2*h+hd*d:]
			// scores = Q·Kᵀ: the keys are B given row by row.
			packRows(&ws.keys, ks, n, d, 3*h)
			clear(ws.scores)
			gemm(ws.scores, ld, qs, 3*h, rows, &ws.keys)
			for i := 0; i < n; i++ {
				softmax(ws.scores[i*ld:i*ld+n], scale)
			}
			// context = P·V.
			packCols(&ws.vals, vs, n, d, 3*h)
			clear(ws.part)
			gemm(ws.part, d, ws.scores, ld, rows, &ws.vals)
			for i := 0; i < n; i++ {
				copy(ws.ctx[(r0+i)*h+hd*d:(r0+i)*h+hd*d+d], ws.part[i*d:(i+1)*d])
			}
		}
		r0 += n
	}
}

// layerNorm normalises each row of h values to zero mean and unit
// variance, then scales and shifts it.
func layerNorm(x []float32, h int, n norm, eps float64) {
	for r := 0; r+h <= len(x); r += h {
		row := x[r : r+h]
		var sum float64
		for _, v := range row {
			sum += float64(v)
		}
		mean := sum / float64(h)
		var ss float64
		for _, v := range row {
			d := float64(v) - mean
			ss += d * d
		}
		inv := 1 / math.Sqrt(ss/float64(h)+eps)
		for j, v := range row {
			row[j] = float32((float64(v)-mean)*inv)*n.gain[j] + n.bias[j]
		}
	}
}

// addNorm is x = LayerNorm(x + y).
func addNorm(x, y []float32, h int, n norm, eps float64) {
	for i := range x {
		x[i] += y[i]
	}
	layerNorm(x, h, n, eps)
}

// softmax turns row·scale into probabilities.
func softmax(row []float32, scale float32) {
	hi := float32(math.Inf(-1))
	for _, v := range row {
		hi = max(hi, v)
	}
	inv := 1 / expSum(row, hi, scale)
	for i := range row {
		row[i] *= inv
	}
}

func activate(x []float32, act string) {
	switch act {
	case "gelu":
		gelu(x)
	case "gelu_new", "gelu_pytorch_tanh":
		for i, v := range x {
			x[i] = geluTanh(v)
		}
	case "relu":
		for i, v := range x {
			x[i] = max(v, 0)
		}
	}
}

// pool reduces a sequence's rows (n×h) to one vector.
func pool(dst, rows []float32, h int, how string) {
	n := len(rows) / h
	switch how {
	case "cls":
		copy(dst, rows[:h])
		return
	case "max":
		copy(dst, rows[:h])
		for r := 1; r < n; r++ {
			for j, v := range rows[r*h : (r+1)*h] {
				dst[j] = max(dst[j], v)
			}
		}
		return
	}
	clear(dst)
	for r := 0; r < n; r++ {
		for j, v := range rows[r*h : (r+1)*h] {
			dst[j] += v
		}
	}
	div := float32(n)
	if how == "mean_sqrt_len" {
		div = float32(math.Sqrt(float64(n)))
	}
	for j := range dst {
		dst[j] /= div
	}
}
