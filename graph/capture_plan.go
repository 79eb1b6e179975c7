package graph

import (
	"fmt"
	"slices"
	"sort"

	"github.com/gradus-ml/gradus/tensor"
)

// The buffer plan. Capture replays the compiled steps once, recording
// every buffer each op's Forward asks for (its output and any scratch),
// and checks that the replay reproduces the trace bit for bit. A buffer
// is live from its step to the last step that reads its step's output, or
// any view of it, to the end for the program's outputs; scratch that the
// output does not hold lives during its step alone. Buffers whose
// lifetimes do not overlap share memory: each is placed at the lowest
// offset of its dtype's arena free during its lifetime, largest first
// (the greedy offset assignment of TensorFlow Lite's arena planner). Run
// then hands each request the same buffer every call.

// align rounds every buffer to 16 elements (a 64-byte line for float32),
// so buffers start on cache lines relative to the arena.
const align = 16

// Buffer is one planned buffer: a request made by a step's Forward.
type Buffer struct {
	Step   int          // the step whose Forward asks for it
	DType  tensor.DType // its dtype; each dtype has its own arena
	Shape  []int        // its shape
	Offset int          // where it starts in its dtype's arena, in elements
	Size   int          // its number of elements
	First  int          // the first step during which it is live (Step)
	Last   int          // the last such step; len(Steps()) for the program's outputs
	Result bool         // whether it holds the step's result (false: scratch, or the base of a view)
}

// BufferPlan lays the program's buffers out in its arenas.
type BufferPlan struct {
	Buffers    []Buffer // in the order the steps ask for them
	ArenaBytes int64    // the arenas' size: the memory the program's steps use at their peak
	NaiveBytes int64    // the buffers' total size, as if none shared memory (what one eager step's pool holds)
	ConstBytes int64    // the constants' size, held by the program besides the arenas
}

// replayer serves the Alloc calls of a Program's graph: while recording,
// with fresh tensors it notes; then with the planned buffers, in order.
type replayer struct {
	recording bool
	reqs      []*tensor.Tensor // recording: each request's tensor
	bufs      []*tensor.Tensor // replaying: each request's planned buffer
	next      int
}

func (r *replayer) alloc(dt tensor.DType, shape []int, zero bool) *tensor.Tensor {
	if r.recording {
		t := tensor.New(dt, shape...)
		r.reqs = append(r.reqs, t)
		r.next++
		return t
	}
	if r.next >= len(r.bufs) {
		tensor.Fail("graph.Program.Run", "an op asked for more buffers (%v %s) than when it was captured", dt, tensor.FormatShape(shape))
	}
	b := r.bufs[r.next]
	if b.DType() != dt || !slices.Equal(b.Shape(), shape) {
		tensor.Fail("graph.Program.Run", "an op asked for a %v %s buffer where the plan holds %v %s", dt, tensor.FormatShape(shape), b.DType(), tensor.FormatShape(b.Shape()))
	}
	r.next++
	if zero {
		b.Fill(0)
	}
	return b
}

// planBuffers records one replay of the steps on the capture's inputs,
// checks it against the trace's values, and lays out the buffers.
func (p *Program) planBuffers(in []*tensor.Tensor, traced []*tensor.Tensor) (err error) {
	r := &replayer{recording: true}
	p.replay, p.exec = r, &Graph{replay: r}
	if err := p.record(in, traced); err != nil {
		return err
	}
	n := len(r.reqs)
	bufs := make([]Buffer, n)
	for i := range p.steps {
		s := &p.steps[i]
		for k := s.reqs[0]; k < s.reqs[1]; k++ {
			t := r.reqs[k]
			bufs[k] = Buffer{Step: i, DType: t.DType(), Shape: slices.Clone(t.Shape()), Size: t.Size(),
				First: i, Last: i, Result: k == s.own}
		}
	}
	p.extendLifetimes(bufs)
	arenas := place(bufs)
	r.bufs = arenaViews(arenas, bufs)
	for _, b := range bufs {
		p.plan.NaiveBytes += int64(b.Size * b.DType.Size())
	}
	for dt, a := range arenas {
		p.plan.ArenaBytes += int64(a * dt.Size())
	}
	for _, s := range p.slots {
		if s.kind == slotConst {
			p.plan.ConstBytes += int64(s.value.Size() * s.dt.Size())
		}
	}
	for i := range p.steps {
		if s := &p.steps[i]; s.own >= 0 {
			s.expected = r.bufs[s.own]
		}
	}
	p.plan.Buffers = bufs
	r.recording, r.reqs = false, nil
	return nil
}

// record runs the steps once with fresh buffers, noting each step's
// requests and which one holds its output.
func (p *Program) record(in []*tensor.Tensor, traced []*tensor.Tensor) (err error) {
	defer tensor.Recover(&err)
	r := p.replay
	for i, s := range p.slots {
		if s.kind == slotInput {
			p.vals[i] = in[s.input]
		}
	}
	for i := range p.steps {
		s := &p.steps[i]
		for j, k := range s.in {
			s.args[j] = p.vals[k]
		}
		s.reqs[0] = r.next
		v := s.op.Forward(p.exec, s.args)
		s.reqs[1] = r.next
		if v == nil || !bitsEqual(v, traced[s.out]) {
			return fmt.Errorf("graph.Capture: %w: replaying step %d (%s) does not reproduce the traced value; its Forward depends on more than its op value and inputs", ErrNotCapturable, i, s.op.Name())
		}
		for k := s.reqs[0]; k < s.reqs[1]; k++ {
			if r.reqs[k] == v {
				s.own = k
			}
		}
		p.vals[s.out] = v
	}
	return nil
}

// extendLifetimes makes each buffer live until the last step that reads
// a value it may hold: its step's output if it holds it, and every view
// derived from that output. A step whose output is not one of its own
// buffers (a reshape, a slice, stop_gradient) may look at any of its
// inputs' memory or its own buffers, so all of them count as its roots.
func (p *Program) extendLifetimes(bufs []Buffer) {
	end := len(p.steps)
	lastUse := make([]int, len(p.slots))
	for i, s := range p.steps {
		for _, k := range s.in {
			lastUse[k] = i
		}
	}
	for _, k := range p.outs {
		lastUse[k] = end
	}
	roots := make([][]int, len(p.slots))
	for i, s := range p.steps {
		if s.own >= 0 {
			roots[s.out] = []int{s.own}
		} else {
			var rs []int
			for _, k := range s.in {
				rs = append(rs, roots[k]...)
			}
			for k := s.reqs[0]; k < s.reqs[1]; k++ {
				rs = append(rs, k)
			}
			slices.Sort(rs)
			roots[s.out] = slices.Compact(rs)
		}
		for _, b := range roots[s.out] {
			bufs[b].Last = max(bufs[b].Last, lastUse[s.out], i)
		}
	}
}

// place assigns offsets: largest buffers first, each at the lowest offset
// where it overlaps no placed buffer of its dtype that is live at the same
// time. It returns each arena's size in elements.
func place(bufs []Buffer) map[tensor.DType]int {
	order := make([]int, len(bufs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := &bufs[order[a]], &bufs[order[b]]
		if x.Size != y.Size {
			return x.Size > y.Size
		}
		return x.First < y.First
	})
	arenas := map[tensor.DType]int{}
	var placed, clash []int
	for _, i := range order {
		b := &bufs[i]
		size := roundUp(b.Size)
		clash = clash[:0]
		for _, j := range placed {
			c := &bufs[j]
			if c.DType == b.DType && c.First <= b.Last && b.First <= c.Last {
				clash = append(clash, j)
			}
		}
		sort.Slice(clash, func(x, y int) bool { return bufs[clash[x]].Offset < bufs[clash[y]].Offset })
		off := 0
		for _, j := range clash {
			c := &bufs[j]
			if c.Offset >= off+size {
				break
			}
			off = max(off, c.Offset+roundUp(c.Size))
		}
		b.Offset = off
		arenas[b.DType] = max(arenas[b.DType], off+size)
		placed = append(placed, i)
	}
	for dt := range arenas {
		arenas[dt] = max(arenas[dt], 1)
	}
	return arenas
}

func roundUp(n int) int { return (max(n, 1) + align - 1) / align * align }

// arenaViews makes one arena per dtype and returns each buffer's tensor
// in it.
func arenaViews(arenas map[tensor.DType]int, bufs []Buffer) []*tensor.Tensor {
	f32 := make([]float32, arenas[tensor.Float32])
	f64 := make([]float64, arenas[tensor.Float64])
	out := make([]*tensor.Tensor, len(bufs))
	for k, b := range bufs {
		shape := append([]int{}, b.Shape...) // non-nil, so a 0-d buffer stays 0-d
		lo, hi := b.Offset, b.Offset+b.Size
		if b.DType == tensor.Float32 {
			out[k] = tensor.FromFloat32s(f32[lo:hi:hi], shape...)
		} else {
			out[k] = tensor.FromFloat64s(f64[lo:hi:hi], shape...)
		}
	}
	return out
}
