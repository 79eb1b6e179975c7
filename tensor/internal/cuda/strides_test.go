package cuda

import (
	"strings"
	"testing"
)

// TestStridesSpan: negative strides read back from an operand's pointer,
// as far as the buffer it was sliced from allows.
func TestStridesSpan(t *testing.T) {
	// A reversed (2, 3) view whose pointer is at element 5 of 6: strides
	// (−3, −1) reach back 5 elements.
	s, n, err := newStridesSpan([]int{2, 3}, []int{-3, -1}, []int{3, 1}, span{5, 1}, span{0, 6})
	if err != nil || n != 6 || s.a[0] != -3 || s.a[1] != -1 {
		t.Fatalf("newStridesSpan of a reversed view = %+v, %d, %v", s, n, err)
	}
	for _, c := range []struct {
		as   []int
		a    span
		want string
	}{
		{[]int{-3, -1}, span{4, 2}, "reads a back to element -5 (its buffer starts at -4)"},
		{[]int{-3, 1}, span{3, 2}, "reads a up to element 2 of 2"},
		{[]int{3, -1}, span{2, 3}, "reads a up to element 3 of 3"},
	} {
		if _, _, err := newStridesSpan([]int{2, 3}, c.as, []int{3, 1}, c.a, span{0, 6}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("newStridesSpan(strides %v, span %v) = %v, want an error containing %q", c.as, c.a, err, c.want)
		}
	}
}
