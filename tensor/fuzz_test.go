package tensor

import (
	"errors"
	"slices"
	"testing"
)

// fuzzBytes hands out bytes from the fuzz input, then zeros.
type fuzzBytes struct {
	b []byte
	i int
}

func (f *fuzzBytes) next() int {
	if f.i >= len(f.b) {
		return 0
	}
	f.i++
	return int(f.b[f.i-1])
}

// refBroadcast is an independent statement of NumPy's rule: align shapes on
// the right, padding with 1s; sizes must match or one of them be 1.
func refBroadcast(a, b []int) ([]int, bool) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := 1; i <= n; i++ {
		x, y := 1, 1
		if i <= len(a) {
			x = a[len(a)-i]
		}
		if i <= len(b) {
			y = b[len(b)-i]
		}
		switch {
		case x == y, y == 1:
			out[n-i] = x
		case x == 1:
			out[n-i] = y
		default:
			return nil, false
		}
	}
	return out, true
}

// refIndex maps the multi-index idx of a broadcast result to the row-major
// offset of the corresponding element of an operand of shape s.
func refIndex(idx, s []int) int {
	lead := len(idx) - len(s)
	off := 0
	for d, n := range s {
		i := idx[lead+d]
		if n == 1 {
			i = 0
		}
		off = off*n + i
	}
	return off
}

// refUnravel returns the row-major multi-index of flat position k.
func refUnravel(k int, shape []int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = k % shape[d]
		k /= shape[d]
	}
	return idx
}

// fuzzTensor builds a tensor holding vals (row-major over shape); when
// strided is set the storage is laid out with the axes reversed, so the
// tensor is a non-contiguous view with the same logical values.
func fuzzTensor(dt DType, vals []float64, shape []int, strided bool) *Tensor {
	logical := FromValues(dt, vals, shape...)
	if !strided || len(shape) < 2 {
		return logical
	}
	rev := make([]int, len(shape))
	rs := make([]int, len(shape))
	for i := range rev {
		rev[i] = len(shape) - 1 - i
		rs[i] = shape[len(shape)-1-i]
	}
	s := New(dt, rs...)
	v := Permute(s, rev...)
	CopyInto(v, logical)
	return v
}

// FuzzBroadcastReduce checks BroadcastShapes, broadcasting Add and Sum over
// random axes against reference implementations written with explicit index
// arithmetic. Values are small integers so every result is exact.
func FuzzBroadcastReduce(f *testing.F) {
	f.Add([]byte{2, 2, 3, 2, 1, 2, 3, 0, 5, 1})
	f.Add([]byte{3, 1, 2, 3, 3, 0, 0, 7, 9, 200, 3, 17})
	f.Add([]byte{4, 4, 1, 2, 3, 3, 1, 1, 2, 9, 4, 5, 6, 255, 1})
	f.Add([]byte{0, 3, 2, 2, 2, 5, 6, 7, 1})
	f.Add([]byte{2, 2, 0, 3, 2, 2, 1, 1, 3})          // a size-0 dimension
	f.Add([]byte{2, 2, 2, 3, 3, 2, 0, 0, 0, 0, 3, 1}) // 2 vs 3: incompatible
	f.Add([]byte{1, 3, 3, 3, 3, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 251})
	f.Add([]byte{})
	// Strided operands (flags bit 1: a, bit 2: b) reduced along strided axes.
	f.Add([]byte{2, 2, 3, 3, 1, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 1, 0, 2, 0})
	f.Add([]byte{2, 2, 3, 3, 1, 0, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 2, 2, 1, 1})
	f.Add([]byte{3, 3, 2, 3, 3, 1, 1, 1, 6,
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 1,
		3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3,
		5, 1, 69, 4})
	f.Add([]byte{3, 3, 2, 3, 3, 1, 1, 1, 7,
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 1,
		3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3,
		2, 0, 3, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzBytes{b: data}
		ra, rb := in.next()%5, in.next()%5
		sa := make([]int, ra)
		for i := range sa {
			sa[i] = in.next() % 4
		}
		// b mostly agrees with a where they overlap (1 or the same size),
		// sometimes not, so both outcomes of broadcasting are exercised.
		sb := make([]int, rb)
		for i := range sb {
			j := ra - rb + i
			switch c := in.next(); {
			case j >= 0 && c%4 == 0:
				sb[i] = 1
			case j >= 0 && c%4 != 3:
				sb[i] = sa[j]
			default:
				sb[i] = c % 4
			}
		}
		want, ok := refBroadcast(sa, sb)
		got, err := fuzzBroadcast(sa, sb)
		if !ok {
			var e *Error
			if err == nil || !errors.As(err, &e) || e.Op != "Fuzz" {
				t.Fatalf("BroadcastShapes(%v, %v) = %v, want a *Error", sa, sb, got)
			}
			return
		}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("BroadcastShapes(%v, %v) = %v, %v; want %v", sa, sb, got, err, want)
		}

		flags := in.next()
		dt := Float32
		if flags&1 != 0 {
			dt = Float64
		}
		av := make([]float64, shapeSize(sa))
		for i := range av {
			av[i] = float64(in.next()%17 - 8)
		}
		bv := make([]float64, shapeSize(sb))
		for i := range bv {
			bv[i] = float64(in.next()%17 - 8)
		}
		a := fuzzTensor(dt, av, sa, flags&2 != 0)
		b := fuzzTensor(dt, bv, sb, flags&4 != 0)

		// Add against explicit index arithmetic.
		c := Add(a, b)
		if !slices.Equal(c.Shape(), want) {
			t.Fatalf("Add shape %v, want %v", c.Shape(), want)
		}
		cv := make([]float64, shapeSize(want))
		for k := range cv {
			idx := refUnravel(k, want)
			cv[k] = av[refIndex(idx, sa)] + bv[refIndex(idx, sb)]
		}
		for k, v := range c.Values() {
			if v != cv[k] {
				t.Fatalf("Add(%v, %v)[%v] = %v, want %v", sa, sb, refUnravel(k, want), v, cv[k])
			}
		}

		// Sum over random axes of the result and of a (maybe strided).
		fuzzCheckSum(t, c, cv, want, in.next(), in.next())
		fuzzCheckSum(t, a, av, sa, in.next(), in.next())
	})
}

// fuzzBroadcast calls BroadcastShapes, turning its panic into an error.
func fuzzBroadcast(a, b []int) (s []int, err error) {
	defer Recover(&err)
	return BroadcastShapes("Fuzz", a, b), nil
}

// fuzzCheckSum sums x (logical values vals over shape) over the axes picked
// by the bits of mask (nil when mask has bit 7 set), negating some axes, and
// compares with a reference that adds every element into its output slot.
func fuzzCheckSum(t *testing.T, x *Tensor, vals []float64, shape []int, mask, neg int) {
	nd := len(shape)
	var axes []int
	red := make([]bool, nd)
	if mask&128 != 0 {
		for d := range red {
			red[d] = true
		}
	} else {
		axes = []int{}
		for d := 0; d < nd; d++ {
			if mask&(1<<d) != 0 {
				red[d] = true
				ax := d
				if neg&(1<<d) != 0 {
					ax -= nd
				}
				axes = append(axes, ax)
			}
		}
	}
	keep := mask&64 != 0
	var outShape, keepShape []int
	for d, n := range shape {
		if red[d] {
			keepShape = append(keepShape, 1)
			if keep {
				outShape = append(outShape, 1)
			}
		} else {
			keepShape = append(keepShape, n)
			outShape = append(outShape, n)
		}
	}
	ref := make([]float64, shapeSize(keepShape))
	for k, v := range vals {
		idx := refUnravel(k, shape)
		ref[refIndex(idx, keepShape)] += v
	}
	s := Sum(x, axes, keep)
	if !slices.Equal(s.Shape(), outShape) {
		t.Fatalf("Sum(%v, %v, %v) shape %v, want %v", shape, axes, keep, s.Shape(), outShape)
	}
	for k, v := range s.Values() {
		if v != ref[k] {
			t.Fatalf("Sum(%v, %v, %v)[%d] = %v, want %v", shape, axes, keep, k, v, ref[k])
		}
	}
}
