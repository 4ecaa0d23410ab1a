package bm25

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// Params are the parameters of keyword ranking. An index pins the ones it
// was created with (Params.String in its meta), so a later change of the
// defaults never mixes two scales in one index.
type Params struct {
	K1     float64            // term-frequency saturation, shared by the fields
	Weight [NumFields]float64 // how much an occurrence in each field counts
	B      [NumFields]float64 // length normalisation of each field, 0 to 1
	// Prox scales the proximity bonus: a chunk's score is multiplied by
	// 1 + Prox·proximity, proximity being 0 to 1 (see Proximity).
	Prox float64
	// HeadProx scales the same bonus measured on the title and heading
	// path alone: query terms that stand together in a page's title or a
	// section's heading ("custom theme" in "Using a Custom Theme") say
	// what the chunk is about.
	HeadProx float64
	// ProxTop is how many of the best BM25F results the bonus re-ranks.
	ProxTop int
}

// ParamsVersion names the scoring these parameters drive; a stored value
// of another version is rejected rather than misread.
const ParamsVersion = "bm25f/1"

// DefaultParams are the parameters a new index pins. They were chosen on
// the odd-numbered half of SciFact's queries and on the labelled VitePress
// questions in testdata/eval (English and Japanese); see docs/eval.md.
// Proximity in the body text is off: it gained 0.002 nDCG@10 on SciFact
// and nothing on VitePress for about twice the keyword p50 (the terms of
// each candidate's text are recomputed), while proximity in the title and
// heading path costs little and lifts the page a heading names.
func DefaultParams() Params {
	return Params{
		K1:       1.2,
		Weight:   [NumFields]float64{Title: 4, Heading: 4, Body: 1},
		B:        [NumFields]float64{Title: 0.5, Heading: 0.5, Body: 0.75},
		Prox:     0,
		HeadProx: 1,
		ProxTop:  20,
	}
}

// String renders p in the form ParseParams reads, e.g.
// "bm25f/1 k1=1.2 w=4,4,1 b=0.5,0.5,0.75 prox=0 hprox=1 top=20" (fields in the
// order title, heading, body).
func (p Params) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	triple := func(v [NumFields]float64) string {
		s := make([]string, NumFields)
		for i, x := range v {
			s[i] = f(x)
		}
		return strings.Join(s, ",")
	}
	return fmt.Sprintf("%s k1=%s w=%s b=%s prox=%s hprox=%s top=%d", ParamsVersion, f(p.K1), triple(p.Weight), triple(p.B), f(p.Prox), f(p.HeadProx), p.ProxTop)
}

// ParseParams reads parameters written by Params.String. Keys left out keep
// their DefaultParams value.
func ParseParams(s string) (Params, error) {
	p := DefaultParams()
	fields := strings.Fields(s)
	if len(fields) == 0 || fields[0] != ParamsVersion {
		return p, fmt.Errorf("keyword scoring %q: want %q first", s, ParamsVersion)
	}
	num := func(k, v string) (float64, error) {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return 0, fmt.Errorf("keyword scoring %q: %s=%q is not a number of 0 or more", s, k, v)
		}
		return x, nil
	}
	triple := func(k, v string) ([NumFields]float64, error) {
		var out [NumFields]float64
		parts := strings.Split(v, ",")
		if len(parts) != int(NumFields) {
			return out, fmt.Errorf("keyword scoring %q: %s wants %d numbers (title,heading,body)", s, k, NumFields)
		}
		for i, x := range parts {
			n, err := num(k, x)
			if err != nil {
				return out, err
			}
			out[i] = n
		}
		return out, nil
	}
	for _, kv := range fields[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return p, fmt.Errorf("keyword scoring %q: %q is not key=value", s, kv)
		}
		var err error
		switch k {
		case "k1":
			p.K1, err = num(k, v)
		case "w":
			p.Weight, err = triple(k, v)
		case "b":
			p.B, err = triple(k, v)
			for _, b := range p.B {
				if err == nil && b > 1 {
					err = fmt.Errorf("keyword scoring %q: b values go from 0 to 1", s)
				}
			}
		case "prox":
			p.Prox, err = num(k, v)
		case "hprox":
			p.HeadProx, err = num(k, v)
		case "top":
			var n int
			n, err = strconv.Atoi(v)
			if err == nil && n < 0 {
				err = fmt.Errorf("negative")
			}
			if err != nil {
				err = fmt.Errorf("keyword scoring %q: top=%q is not a count", s, v)
			}
			p.ProxTop = n
		default:
			err = fmt.Errorf("keyword scoring %q: unknown key %q", s, k)
		}
		if err != nil {
			return p, err
		}
	}
	return p, nil
}

// maxProxTerms bounds the query terms proximity looks at, so that a long
// query costs a bounded number of pairs.
const maxProxTerms = 8

// Proximity measures how close together the query's terms occur in a chunk
// whose analysed terms, in order, are text. Each pair of distinct query
// terms scores 1/d² for the smallest distance d between their occurrences
// (1 when adjacent); the result is the mean over all pairs of the query's
// first terms, from 0 (no two terms near each other, or a one-term query)
// to 1 (every pair adjacent).
func Proximity(query, text []string) float64 {
	q := make([]string, 0, min(len(query), maxProxTerms))
	for _, t := range query {
		if !slices.Contains(q, t) {
			q = append(q, t)
			if len(q) == maxProxTerms {
				break
			}
		}
	}
	if len(q) < 2 {
		return 0
	}
	pos := make([][]int, len(q))
	for i, t := range text {
		for j, w := range q {
			if t == w {
				pos[j] = append(pos[j], i)
				break
			}
		}
	}
	sum := 0.0
	for a := range q {
		for b := a + 1; b < len(q); b++ {
			if d := minDistance(pos[a], pos[b]); d > 0 {
				sum += 1 / float64(d*d)
			}
		}
	}
	return sum / float64(len(q)*(len(q)-1)/2)
}

// minDistance is the smallest |x-y| over x in a, y in b (both ascending),
// 0 when either is empty.
func minDistance(a, b []int) int {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	best := math.MaxInt
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		d := a[i] - b[j]
		if d < 0 {
			d = -d
			i++
		} else {
			j++
		}
		best = min(best, d)
	}
	return best
}

// Rerank applies the proximity bonus to the first p.ProxTop of ranked (best
// first, as Score returns them): text(i) gives the analysed terms of the
// i-th result's title and heading path (head) and of its whole context
// text (all). It returns ranked re-sorted, ties to the lower ID.
func Rerank(p Params, query []string, ranked []store.Scored, text func(i int) (head, all []string)) []store.Scored {
	n := min(p.ProxTop, len(ranked))
	if (p.Prox == 0 && p.HeadProx == 0) || n < 2 {
		return ranked
	}
	for i := range n {
		head, all := text(i)
		bonus := 0.0
		if p.Prox > 0 {
			bonus += p.Prox * Proximity(query, all)
		}
		if p.HeadProx > 0 {
			bonus += p.HeadProx * Proximity(query, head)
		}
		ranked[i].Score *= 1 + bonus
	}
	slices.SortStableFunc(ranked[:n], func(a, b store.Scored) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ChunkID, b.ChunkID))
	})
	return ranked
}

// MetaKey is the index meta key under which a store pins its Params.
const MetaKey = "keyword.scoring"

// VersionKey is the index meta key of the count of writes that changed the
// keyword index: a Cache built for one count is stale at another, whichever
// process wrote.
const VersionKey = "keyword.version"
