package tensor

import "github.com/gradus-ml/gradus/tensor/internal/devices"

// NonFinite counts the NaN and ±Inf elements of t (float32 or float64)
// and returns the row-major index and value of the first, reading a
// contiguous tensor in place (a view is copied once). count is 0, and
// first −1, when every element is finite: the common case, decided in
// one branch-free pass, so that checks on every step (gradients, restored
// optimiser state, checkpoints) cost little and allocate nothing.
func NonFinite(t *Tensor) (count, first int, value float64) {
	if t == nil {
		Fail("NonFinite", "tensor is nil")
	}
	if t.dev != nil { // one pass on the device; the rare bad case is located on the host
		defer alive(t)
		c, done := contiguousOperand("NonFinite", t)
		bad, err := c.dev.be.NonFinite(devDType(t.dtype), t.Size(), c.mem())
		done()
		gpuCheck("NonFinite", err)
		if !bad {
			return 0, -1, 0
		}
		return NonFinite(t.To(CPU))
	}
	c := t
	if !c.IsContiguous() {
		c = c.Contiguous()
	}
	if c.dtype == Float32 {
		return nonFinite(c.Float32s())
	}
	return nonFinite(c.Float64s())
}

func nonFinite[T Float](xs []T) (count, first int, value float64) {
	if allFinite(xs) {
		return 0, -1, 0
	}
	first = -1
	for i, x := range xs {
		if x-x != 0 {
			if count == 0 {
				first, value = i, float64(x)
			}
			count++
		}
	}
	return count, first, value
}

// allFinite reports whether every element of xs is finite. x−x is 0 for
// finite x and NaN for NaN or ±Inf, and NaN survives a sum: the vector
// kernel sums it in four accumulators of lanes, and the tail here in four
// scalar ones, so the pass runs at memory speed without a branch on the
// data.
func allFinite[T Float](xs []T) bool {
	k := finiteBlocks(xs)
	if k < 0 {
		return false
	}
	xs = xs[k:]
	var a0, a1, a2, a3 T
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		a0 += xs[i] - xs[i]
		a1 += xs[i+1] - xs[i+1]
		a2 += xs[i+2] - xs[i+2]
		a3 += xs[i+3] - xs[i+3]
	}
	for ; i < len(xs); i++ {
		a0 += xs[i] - xs[i]
	}
	return a0+a1+a2+a3 == 0
}

// AllFinite reports whether every element of every tensor is finite (no
// NaN, no ±Inf). Tensors on a GPU are checked there, all with one wait
// per device, where a NonFinite call per tensor would wait once each; an
// optimiser checking its gradients before a step calls it first and looks
// for the culprit with NonFinite only when it returns false.
func AllFinite(ts ...*Tensor) bool {
	type batch struct {
		be  devices.Backend
		dts []devices.DType
		ns  []int
		xs  []devices.Mem
	}
	var onGPU map[Device]*batch
	var scratch []*Tensor
	defer alive(ts...)
	defer func() {
		for _, t := range scratch {
			t.release()
		}
	}()
	for _, t := range ts {
		if t == nil {
			Fail("AllFinite", "tensor is nil")
		}
		if t.dev == nil {
			if n, _, _ := NonFinite(t); n > 0 {
				return false
			}
			continue
		}
		c := t.deviceContiguous("AllFinite")
		if c != t {
			scratch = append(scratch, c)
		}
		if onGPU == nil {
			onGPU = map[Device]*batch{}
		}
		b := onGPU[t.Device()]
		if b == nil {
			b = &batch{be: t.dev.be}
			onGPU[t.Device()] = b
		}
		b.dts, b.ns, b.xs = append(b.dts, devDType(t.dtype)), append(b.ns, t.Size()), append(b.xs, c.mem())
	}
	for _, b := range onGPU {
		bad, err := b.be.NonFiniteAll(b.dts, b.ns, b.xs)
		gpuCheck("AllFinite", err)
		if bad {
			return false
		}
	}
	return true
}
