package budget

import (
	"errors"
	"math"
)

// Shape is how much of a response to keep.
type Shape struct {
	// Items is how many items (results, sources, records) to keep, best
	// first; the rest are dropped.
	Items int
	// Text is the most runes one text field of an item may keep; longer
	// texts are shortened and marked as truncated.
	Text int
}

// Render builds a response in a shape, with estimate written into it as its
// own token count, and returns it with its wire form: the exact bytes the
// client receives, which is what gets counted.
type Render[T any] func(s Shape, estimate int) (T, []byte, error)

// Fitted is a response measured to fit.
type Fitted[T any] struct {
	Value T
	Wire  []byte
	// Tokens is the count of Wire, and the estimate written into Value.
	Tokens int
	Shape  Shape
	// Cut reports that the response was made smaller than its full shape.
	Cut bool
}

// maxStamp bounds the rounds of Stamp; the count settles in two or three.
const maxStamp = 8

// Stamp renders s with its own token count written in: it renders, counts,
// writes the count in and renders again until the count it writes is the
// count it measures. (Should the count never settle, the last estimate that
// is at least the measured count is kept: an upper bound, a token or two
// high.)
func Stamp[T any](c *Counter, s Shape, render Render[T]) (Fitted[T], error) {
	est := 0
	var upper *Fitted[T]
	for range maxStamp {
		v, wire, err := render(s, est)
		if err != nil {
			return Fitted[T]{}, err
		}
		n := c.Count(string(wire))
		f := Fitted[T]{Value: v, Wire: wire, Tokens: est, Shape: s}
		if n == est {
			return f, nil
		}
		if n < est && (upper == nil || est < upper.Tokens) {
			upper = &f
		}
		est = n
	}
	if upper != nil {
		return *upper, nil
	}
	// Still growing: a generous estimate bounds it.
	est += 16
	v, wire, err := render(s, est)
	return Fitted[T]{Value: v, Wire: wire, Tokens: est, Shape: s}, err
}

// Fit returns the largest shape of a response whose measured size is at
// most limit tokens. It renders full first; if that is too large it shortens
// every text (down to minText runes), and if that is not enough it keeps
// minText and drops items from the end (the lowest-ranked first). It never
// cuts the wire form itself: every candidate is rendered whole and measured.
// Candidates are probed with limit as their estimate (a number at least as
// long as the final one), and the chosen shape is stamped and measured
// again, stepping down should the stamped form come out a token larger.
// ErrTooLarge means not even zero items fit.
func Fit[T any](c *Counter, limit int, full Shape, minText int, render Render[T]) (Fitted[T], error) {
	fits := func(s Shape) (bool, error) {
		_, wire, err := render(s, limit)
		if err != nil {
			return false, err
		}
		return c.Count(string(wire)) <= limit, nil
	}
	chosen, err := choose(fits, full, minText)
	if err != nil && !errors.Is(err, ErrTooLarge) {
		return Fitted[T]{}, err
	}
	tooLarge := err != nil
	for {
		f, err := Stamp(c, chosen, render)
		if err != nil {
			return f, err
		}
		f.Cut = chosen != full
		if f.Tokens <= limit && !tooLarge {
			return f, nil
		}
		next, ok := smaller(chosen, minText)
		if tooLarge || !ok {
			return f, ErrTooLarge
		}
		chosen = next
	}
}

// choose finds the largest shape that fits by probing: full, then shorter
// texts, then fewer items.
func choose(fits func(Shape) (bool, error), full Shape, minText int) (Shape, error) {
	ok, err := fits(full)
	if err != nil || ok {
		return full, err
	}
	text := min(full.Text, minText)
	if full.Text > minText {
		s := Shape{Items: full.Items, Text: minText}
		if ok, err := fits(s); err != nil || ok {
			lo, hi := minText, full.Text // lo fits, hi does not
			for err == nil && hi-lo > max(8, lo/32) {
				mid := lo + (hi-lo)/2
				if hi > 4*lo {
					// Far apart: halve the ratio, not the difference.
					mid = int(math.Sqrt(float64(lo) * float64(hi)))
				}
				if ok, err = fits(Shape{Items: full.Items, Text: mid}); ok {
					lo = mid
				} else {
					hi = mid
				}
			}
			return Shape{Items: full.Items, Text: lo}, err
		}
	}
	s := Shape{Items: 0, Text: text}
	if ok, err := fits(s); err != nil || !ok {
		if err == nil {
			err = ErrTooLarge
		}
		return s, err
	}
	lo, hi := 0, full.Items // lo fits, hi does not
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := fits(Shape{Items: mid, Text: text})
		if err != nil {
			return s, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return Shape{Items: lo, Text: text}, nil
}

// smaller is the next shape down: a tenth less text, else one item fewer.
func smaller(s Shape, minText int) (Shape, bool) {
	switch {
	case s.Text > minText:
		s.Text = max(minText, s.Text-max(1, s.Text/10))
	case s.Items > 0:
		s.Items--
	default:
		return s, false
	}
	return s, true
}

// TextBound is the longest text worth trying first for items of the given
// lengths (in runes) under a budget of limit tokens: the cut at which all
// texts together hold at most four runes per token of budget. Ordinary text
// runs at one to four runes per token, and a result carries its text twice
// (structured and rendered), so nothing longer can fit; starting there
// spares measuring megabytes that never could.
func TextBound(lengths []int, limit int) int {
	total, longest := 0, 0
	for _, n := range lengths {
		total += n
		longest = max(longest, n)
	}
	target := 4 * limit
	if total <= target {
		return longest
	}
	lo, hi := 0, longest // sum(min(n, lo)) <= target < sum(min(n, hi))
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		sum := 0
		for _, n := range lengths {
			sum += min(n, mid)
		}
		if sum <= target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return max(lo, 1)
}
