package local

import "math"

// expf is e^x in float32 for the softmax, whose arguments are at most 0:
// x = k·ln2 + r with |r| ≤ ln2/2, e^r by a degree-6 polynomial (relative
// error below 2e-7), 2^k put into the exponent bits.
func expf(x float32) float32 {
	if x < -87 {
		return 0
	}
	if x > 88 {
		return float32(math.Inf(1))
	}
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	k := float32(math.Floor(float64(x*log2e + 0.5)))
	r := x - k*ln2hi - k*ln2lo
	p := float32(1.0/720)*r + 1.0/120
	p = p*r + 1.0/24
	p = p*r + 1.0/6
	p = p*r + 0.5
	p = p*r + 1
	p = p*r + 1
	return p * math.Float32frombits(uint32(int32(k)+127)<<23)
}

// geluErf is BERT's GELU, x·Φ(x) = x/2·(1 + erf(x/√2)).
func geluErf(x float32) float32 {
	return 0.5 * x * (1 + erff(x*(1/math.Sqrt2)))
}

// erff is erf in float32 by Abramowitz and Stegun's 7.1.26: 1 − (a₁t +
// a₂t² + … + a₅t⁵)·e^(−x²) with t = 1/(1 + p|x|), absolute error below
// 1.5e-7 (5e-7 with float32 arithmetic), a few float32 roundings of the
// GELU it feeds.
func erff(x float32) float32 {
	const (
		p  = 0.3275911
		a1 = 0.254829592
		a2 = -0.284496736
		a3 = 1.421413741
		a4 = -1.453152027
		a5 = 1.061405429
	)
	ax := x
	if ax < 0 {
		ax = -ax
	}
	t := 1 / (1 + p*ax)
	y := 1 - ((((a5*t+a4)*t+a3)*t+a2)*t+a1)*t*expf(-ax*ax)
	if x < 0 {
		return -y
	}
	return y
}

// geluTanh is the tanh approximation of GELU ("gelu_new").
func geluTanh(x float32) float32 {
	const c = 0.7978845608028654 // √(2/π)
	v := float64(x)
	return float32(0.5 * v * (1 + math.Tanh(c*(v+0.044715*v*v*v))))
}

// geluGo applies geluErf to each value.
func geluGo(x []float32) {
	for i, v := range x {
		x[i] = geluErf(v)
	}
}

// expSumGo replaces each value by e^((v-hi)·scale) and returns their sum.
func expSumGo(x []float32, hi, scale float32) float32 {
	var sum float32
	for i, v := range x {
		e := expf((v - hi) * scale)
		x[i] = e
		sum += e
	}
	return sum
}
