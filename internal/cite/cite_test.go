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
