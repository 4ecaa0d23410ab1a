package cite

import (
	"reflect"
	"testing"
)

func TestNumbers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"Set base [2]. Then build [1][2].", []int{2, 1}},
		{"Both say so [3, 1].", []int{3, 1}},
		{"Index with `arr[1]` and cite [2].", []int{2}},
		{"```js\nconst x = a[1]\n```\nAs shown [4].", []int{4}},
		{"No markers [x] here.", nil},
	} {
		if got := Numbers(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Numbers(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestStripRenderRenumber(t *testing.T) {
	if got := Strip("Set base [2]. Build [1, 3]."); got != "Set base. Build." {
		t.Errorf("Strip: %q", got)
	}
	if got := Render([]int{1, 3}); got != "[1][3]" {
		t.Errorf("Render: %q", got)
	}
	in := "Use `a[2]` then [2]; see [3, 2]."
	if got, want := Renumber(in, map[int]int{2: 1, 3: 2}), "Use `a[2]` then [1]; see [2, 1]."; got != want {
		t.Errorf("Renumber: %q, want %q", got, want)
	}
}

// TestFencesCloseAsMarkdownDoes: a block closes only at a fence of its own
// character, at least as long, with nothing after it; a ~~~ block may show
// ``` fences inside it.
func TestFencesCloseAsMarkdownDoes(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string
		code  []bool
	}{
		{"backticks", []string{"a [1]", "```go", "x[1]", "```", "b [2]"}, []bool{false, true, true, true, false}},
		{"tildes around backticks", []string{"~~~console", "$ sagasu ask", "```ts", "y [1]", "```", "~~~", "after [1]"}, []bool{true, true, true, true, true, true, false}},
		{"an info string does not close", []string{"```", "```ts", "```", "z"}, []bool{true, true, true, false}},
		{"a longer fence closes, a shorter one does not", []string{"````md", "```", "inner", "```", "`````", "out"}, []bool{true, true, true, true, true, false}},
		{"two backticks are no fence", []string{"``x``", "text"}, []bool{false, false}},
		{"indented", []string{"  ```", "  code", "  ```", "text"}, []bool{true, true, true, false}},
	} {
		var f Fences
		for i, l := range c.lines {
			if got := f.Line(l); got != c.code[i] {
				t.Errorf("%s: line %d %q: code %t, want %t", c.name, i, l, got, c.code[i])
			}
		}
		if f.Open() {
			t.Errorf("%s: left open", c.name)
		}
	}
	s := "~~~console\n$ ask\n```ts\nx [1]\n```\n~~~\nSee it [2]."
	if got := Numbers(s); len(got) != 1 || got[0] != 2 {
		t.Errorf("Numbers(%q) = %v, want [2]: the markers inside the ~~~ block are code", s, got)
	}
}
