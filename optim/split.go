package optim

import (
	"github.com/gradus-ml/gradus/internal/parallel"
	"github.com/gradus-ml/gradus/tensor"
)

// updateMin is the fewest elements of a parameter each goroutine updates
// when an update is split over the cores: the updates are elementwise
// and about a nanosecond per element, so 2¹⁵ elements are tens of µs of
// work against a few µs to start and join a goroutine. Parameters of
// fewer than 2·updateMin elements are updated on the caller, which
// allocates nothing.
const updateMin = 1 << 15

// part is s[lo:hi], or nil for an absent buffer.
func part[T any](s []T, lo, hi int) []T {
	if s == nil {
		return nil
	}
	return s[lo:hi]
}

// Each update below is elementwise, so every element gets the bits a
// serial update gives it whichever chunk it falls in.

func adamSplit[T tensor.Float](p, g, m, v, vm []T, h adamHyper) {
	if len(p) < 2*updateMin {
		adamUpdate(p, g, m, v, vm, h)
		return
	}
	parallel.Range(len(p), 0, updateMin, func(lo, hi int) {
		adamUpdate(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], part(vm, lo, hi), h)
	})
}

func sgdSplit[T tensor.Float](p, g, buf []T, lr, mom, keep1, wd T, first, nesterov bool) {
	if len(p) < 2*updateMin {
		sgdUpdate(p, g, buf, lr, mom, keep1, wd, first, nesterov)
		return
	}
	parallel.Range(len(p), 0, updateMin, func(lo, hi int) {
		sgdUpdate(p[lo:hi], g[lo:hi], part(buf, lo, hi), lr, mom, keep1, wd, first, nesterov)
	})
}

func rmspropSplit[T tensor.Float](p, g, sq, avg, mbuf []T, negLR, alpha, w, eps, mom, wd T) {
	if len(p) < 2*updateMin {
		rmspropUpdate(p, g, sq, avg, mbuf, negLR, alpha, w, eps, mom, wd)
		return
	}
	parallel.Range(len(p), 0, updateMin, func(lo, hi int) {
		rmspropUpdate(p[lo:hi], g[lo:hi], sq[lo:hi], part(avg, lo, hi), part(mbuf, lo, hi), negLR, alpha, w, eps, mom, wd)
	})
}

func adagradSplit[T tensor.Float](p, g, sum []T, negLR, eps, wd T) {
	if len(p) < 2*updateMin {
		adagradUpdate(p, g, sum, negLR, eps, wd)
		return
	}
	parallel.Range(len(p), 0, updateMin, func(lo, hi int) {
		adagradUpdate(p[lo:hi], g[lo:hi], sum[lo:hi], negLR, eps, wd)
	})
}
