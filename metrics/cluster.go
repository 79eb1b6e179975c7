package metrics

import "fmt"

// AdjustedRand returns the adjusted Rand index of two clusterings of the
// same items (Hubert and Arabie 1985): the Rand index corrected for
// chance, 1 for identical partitions (whatever the labels' names) and 0 in
// expectation for independent ones; it can be negative. It errors for
// clusterings of different lengths or fewer than two items, and returns 1
// when both put every item in one cluster (or each in its own), where the
// index's denominator vanishes, as scikit-learn does.
func AdjustedRand(a, b []int) (float64, error) {
	if len(a) != len(b) || len(a) < 2 {
		return 0, fmt.Errorf("metrics.AdjustedRand: clusterings of %d and %d items (need equal lengths ≥ 2)", len(a), len(b))
	}
	pairs := func(n int) float64 { return float64(n) * float64(n-1) / 2 }
	table := map[[2]int]int{}
	ra, rb := map[int]int{}, map[int]int{}
	for i := range a {
		table[[2]int{a[i], b[i]}]++
		ra[a[i]]++
		rb[b[i]]++
	}
	var sij, sa, sb float64
	for _, c := range table {
		sij += pairs(c)
	}
	for _, c := range ra {
		sa += pairs(c)
	}
	for _, c := range rb {
		sb += pairs(c)
	}
	expected := sa * sb / pairs(len(a))
	if (sa+sb)/2 == expected {
		return 1, nil
	}
	return (sij - expected) / ((sa+sb)/2 - expected), nil
}
