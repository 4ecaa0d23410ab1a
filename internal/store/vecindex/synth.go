package vecindex

import (
	"math"
	"math/rand/v2"
)

// Clustered returns n pseudo-random dim-dimensional vectors with the
// structure embeddings have at several scales, for tests and benchmarks
// without a model: topics (one per 100 vectors) hold subtopics (one per
// 10), and each vector is its subtopic plus noise. The same seed gives the
// same vectors; draw queries from another seed of the same n and dim to
// get held-out points of the same topics.
func Clustered(n, dim int, seed uint64) [][]float32 {
	return clustered(n, n, dim, seed, seed, false)
}

// ClusteredQueries returns q vectors drawn like Clustered(n, dim, seed)'s
// (same topics and subtopics) but none of them.
func ClusteredQueries(q, n, dim int, seed uint64) [][]float32 {
	return clustered(q, n, dim, seed, seed^0xa5a5a5a5deadbeef, true)
}

// clustered draws count vectors around the topics of a collection of n
// (from seed) with noise from noiseSeed: in turn over the subtopics, or at
// random ones when random is set.
func clustered(count, n, dim int, seed, noiseSeed uint64, random bool) [][]float32 {
	topics := max(1, n/100)
	subs := max(1, n/10)
	rng := rand.New(rand.NewPCG(seed, 1))
	gauss := func(r *rand.Rand, scale float64) []float64 {
		v := make([]float64, dim)
		s := scale / math.Sqrt(float64(dim))
		for i := range v {
			v[i] = r.NormFloat64() * s
		}
		return v
	}
	centre := make([][]float64, topics)
	for i := range centre {
		centre[i] = gauss(rng, 1)
	}
	sub := make([][]float64, subs)
	for i := range sub {
		off := gauss(rng, 0.7)
		c := centre[i%topics]
		for j := range off {
			off[j] += c[j]
		}
		sub[i] = off
	}
	noise := rand.New(rand.NewPCG(noiseSeed, 2))
	out := make([][]float32, count)
	for i := range out {
		base := sub[i%subs]
		if random {
			base = sub[noise.IntN(subs)]
		}
		e := gauss(noise, 0.45)
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(base[j] + e[j])
		}
		out[i] = v
	}
	return out
}
