package embed

import "math"

// Normalize scales v in place to unit L2 length. A zero vector stays zero.
func Normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}

// Dot is the dot product of a and b, which for normalised vectors is their
// cosine similarity. It panics if the lengths differ.
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		panic("embed.Dot: vectors of different lengths")
	}
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Cosine is the cosine similarity of a and b, whether or not they are
// normalised; 0 if either is zero. It panics if the lengths differ.
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) {
		panic("embed.Cosine: vectors of different lengths")
	}
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return float32(ab / math.Sqrt(aa*bb))
}
