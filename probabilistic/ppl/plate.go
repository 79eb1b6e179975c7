package ppl

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// PlateOptions configures a plate. The zero value is a plate over all of
// its size at the rightmost dimension no enclosing plate uses.
type PlateOptions struct {
	// Subsample > 0 draws that many distinct indices (sorted) at random
	// for each run: the sites inside see only those rows, and their
	// log-probabilities are multiplied by Size/Subsample, so the joint
	// density and the ELBO stay unbiased (Hoffman et al. 2013,
	// "Stochastic variational inference"). It needs a Seed handler.
	Subsample int
	// Dim is the batch dimension of the plate, negative, counted from the
	// right (−1 the last axis). Zero takes the rightmost one free, so a
	// plate inside another lands one axis to its left, as in Pyro.
	Dim int
}

// Plate declares size conditionally independent copies of what body
// declares, along one batch dimension of its sites, and calls body once
// with the indices of the rows in play (0…size−1, or a random subsample).
// Every sample site inside must have, at the plate's dimension, the
// subsample's size; Sample panics with a *tensor.Error naming the site and
// the plate when it does not. Plate panics with a *tensor.Error for a
// size below 1, a subsample outside 1…size, a non-negative Dim or one an
// enclosing plate uses.
func Plate(c *Ctx, name string, size int, opts PlateOptions, body func(idx []int)) {
	if size < 1 || opts.Subsample < 0 || opts.Subsample > size {
		tensor.Fail("ppl.Plate", "plate %q: size %d and subsample %d: want size ≥ 1 and 0 ≤ subsample ≤ size", name, size, opts.Subsample)
	}
	if body == nil {
		tensor.Fail("ppl.Plate", "plate %q has a nil body", name)
	}
	used := func(d int) bool {
		return slices.ContainsFunc(c.plates, func(p PlateFrame) bool { return p.Dim == d })
	}
	dim := opts.Dim
	switch {
	case dim > 0:
		tensor.Fail("ppl.Plate", "plate %q: Dim %d must be negative", name, dim)
	case dim == 0:
		dim = -1
		for used(dim) {
			dim--
		}
	case used(dim):
		tensor.Fail("ppl.Plate", "plate %q: Dim %d is used by an enclosing plate", name, dim)
	}
	s := &Site{Name: name, Kind: PlateSite, Size: size, subsample: opts.Subsample}
	c.apply(s)
	frame := PlateFrame{Name: name, Size: size, Sub: len(s.Indices), Dim: dim}
	c.plates = append(c.plates, frame)
	defer func() { c.plates = c.plates[:len(c.plates)-1] }()
	body(s.Indices)
}
