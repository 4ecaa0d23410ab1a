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

// Fit returns the largest shape of a response whose measured size is at
// most limit tokens. It renders full first; if that is too large it shortens
// every text (down to minText runes), and if that is not enough it keeps
// minText and drops items from the end (the lowest-ranked first). It never
// cuts the wire form itself: every candidate is rendered whole and measured.
//
// Each candidate is measured once, rendered with limit as its estimate (a
// number at least as long as the final one); the chosen one is rendered
// once more with its measured size written in, and not measured again: the
// size it states is what was measured with a number of at least as many
// digits in its place. ErrTooLarge means not even zero items fit.
func Fit[T any](c *Counter, limit int, full Shape, minText int, render Render[T]) (Fitted[T], error) {
	counts := map[Shape]int{}
	fits := func(s Shape) (bool, error) {
		_, wire, err := render(s, limit)
		if err != nil {
			return false, err
		}
		n := c.Count(string(wire))
		counts[s] = n
		return n <= limit, nil
	}
	chosen, err := choose(fits, full, minText)
	if err != nil && !errors.Is(err, ErrTooLarge) {
		return Fitted[T]{}, err
	}
	if _, ok := counts[chosen]; !ok {
		if _, ferr := fits(chosen); ferr != nil {
			return Fitted[T]{}, ferr
		}
	}
	n := counts[chosen]
	v, wire, rerr := render(chosen, n)
	if rerr != nil {
		return Fitted[T]{}, rerr
	}
	f := Fitted[T]{Value: v, Wire: wire, Tokens: n, Shape: chosen, Cut: chosen != full}
	if err != nil {
		return f, ErrTooLarge
	}
	return f, nil
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
