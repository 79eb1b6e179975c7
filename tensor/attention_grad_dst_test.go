package tensor

import (
	"math"
	"testing"
)

// TestAttentionGradOverwritesDst: the reverse pass writes every element
// of its destination (the first product into each block of dQ, dK and dV
// overwrites instead of adding), so a destination full of NaN gives the
// bits a zeroed one gives, with one key tile or several split over
// goroutines, causal or not.
func TestAttentionGradOverwritesDst(t *testing.T) {
	cases := []struct {
		q, k, v []int
		causal  bool
	}{
		{[]int{2, 70, 5}, []int{2, 150, 5}, []int{2, 150, 7}, false},
		{[]int{1, 300, 4}, []int{1, 300, 4}, []int{1, 300, 4}, true},
		{[]int{3, 2, 65, 4}, []int{3, 2, 129, 4}, []int{3, 2, 129, 3}, false},
		{[]int{2, 133, 6}, []int{2, 133, 6}, []int{2, 133, 3}, true},
	}
	for _, dt := range laDTypes {
		for i, c := range cases {
			q, k, v := laRandom(dt, uint64(3*i+1), c.q...), laRandom(dt, uint64(3*i+2), c.k...), laRandom(dt, uint64(3*i+3), c.v...)
			out := AttentionPacked(q, k, v, nil, 0.5, c.causal)
			ct := laRandom(dt, 99, out.Shape()...)
			shape := AttentionGradShape("test", q, k, v, nil, out, ct, c.causal)
			zero := attentionGradTrusted(New(dt, shape...), q, k, v, nil, out, ct, 0.5, c.causal)
			dirty := New(dt, shape...)
			dirty.Fill(math.NaN())
			attentionGradTrusted(dirty, q, k, v, nil, out, ct, 0.5, c.causal)
			z, d := zero.Values(), dirty.Values()
			for j := range z {
				if math.Float64bits(z[j]) != math.Float64bits(d[j]) {
					t.Fatalf("%v case %d element %d: %v into NaN, %v into zeros", dt, i, j, d[j], z[j])
				}
			}
		}
	}
}
