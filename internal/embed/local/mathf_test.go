package local

import (
	"math"
	"testing"
)

// TestMathf: the float32 exp and erf stay within a few float32 roundings
// of float64 math over the ranges the softmax and GELU see.
func TestMathf(t *testing.T) {
	var worstExp, worstErf, worstGelu float64
	for i := 0; i <= 200000; i++ {
		x := float64(float32(-80 + 80*float64(i)/200000)) // softmax arguments are ≤ 0
		got, want := float64(expf(float32(x))), math.Exp(x)
		worstExp = math.Max(worstExp, math.Abs(got-want)/want)
		y := float64(float32(-10 + 20*float64(i)/200000))
		worstErf = math.Max(worstErf, math.Abs(float64(erff(float32(y)))-math.Erf(y)))
		g := 0.5 * y * (1 + math.Erf(y/math.Sqrt2))
		worstGelu = math.Max(worstGelu, math.Abs(float64(geluErf(float32(y)))-g)/math.Max(1, math.Abs(g)))
	}
	t.Logf("worst relative exp error %.3g, absolute erf error %.3g, GELU error %.3g", worstExp, worstErf, worstGelu)
	if worstExp > 5e-7 || worstErf > 6e-7 || worstGelu > 5e-7 {
		t.Errorf("exp %.3g, erf %.3g, GELU %.3g: worse than the bounds", worstExp, worstErf, worstGelu)
	}
	if expf(-100) != 0 || expf(0) != 1 {
		t.Errorf("expf(-100) = %g, expf(0) = %g", expf(-100), expf(0))
	}
}

// TestVectorMath: the assembly GELU and softmax exponentials agree with
// the scalar Go ones (the same formulas, so within float32 rounding).
func TestVectorMath(t *testing.T) {
	x := make([]float32, 1003)
	for i := range x {
		x[i] = -12 + 24*float32(i)/float32(len(x))
	}
	a, b := append([]float32(nil), x...), append([]float32(nil), x...)
	gelu(a)
	geluGo(b)
	for i := range a {
		if d := math.Abs(float64(a[i] - b[i])); d > 1e-6*math.Max(1, math.Abs(float64(b[i]))) {
			t.Fatalf("gelu(%g): vector %g, scalar %g", x[i], a[i], b[i])
		}
	}
	a, b = append([]float32(nil), x...), append([]float32(nil), x...)
	sa, sb := expSum(a, 12, 0.7), expSumGo(b, 12, 0.7)
	if math.Abs(float64(sa-sb)) > 1e-5*float64(sb) {
		t.Fatalf("sum of exponentials: vector %g, scalar %g", sa, sb)
	}
	for i := range a {
		if d := math.Abs(float64(a[i] - b[i])); d > 1e-6*float64(b[i])+1e-30 {
			t.Fatalf("exp at %g: vector %g, scalar %g", x[i], a[i], b[i])
		}
	}
}
