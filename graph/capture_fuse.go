package graph

import (
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/gradus-ml/gradus/tensor"
)

// Elementwise fusion. A chain of elementwise ops of one shape (their
// operands may broadcast into it), whose intermediate values nothing else
// reads, becomes one fused step: it walks the output in blocks of
// fusedBlock elements and applies the chain's kernels to each block in
// turn, so the intermediates stay in the cache instead of each making a
// pass over memory, and only the chain's result gets a buffer. The
// kernels are the run kernels the ops' Forwards split their work into
// (internal/unchecked's Run32 and Run64), each of which computes element i
// from element i of its operands alone, so a fused step gives the bits
// the unfused ops give: fusion, like the other optimisations, changes no
// bit, and Capture's planning replay checks that it does not.

// fusedBlock is the number of elements each instruction of a fused step
// works on at a time: eight registers of float64 fit in a 48 KiB L1 cache.
const fusedBlock = 512

// fusedParMin is the output size from which a fused step splits its
// blocks over GOMAXPROCS goroutines (the unfused kernels split from 2^17
// elements; a fused step does several ops' work per element).
const fusedParMin = 1 << 16

// fusible is implemented by the elementwise ops a Program may fuse: the
// field name in internal/unchecked's table of the kernel their Forward
// calls on their inputs in order, and its scalar parameter.
type fusible interface {
	fuseKernel() (name string, p float64)
}

func (addOp) fuseKernel() (string, float64)             { return "Add", 0 }
func (subOp) fuseKernel() (string, float64)             { return "Sub", 0 }
func (mulOp) fuseKernel() (string, float64)             { return "Mul", 0 }
func (divOp) fuseKernel() (string, float64)             { return "Div", 0 }
func (powOp) fuseKernel() (string, float64)             { return "Pow", 0 }
func (negOp) fuseKernel() (string, float64)             { return "Neg", 0 }
func (expOp) fuseKernel() (string, float64)             { return "Exp", 0 }
func (xlogyOp) fuseKernel() (string, float64)           { return "Xlogy", 0 }
func (o addScalarOp) fuseKernel() (string, float64)     { return "AddScalar", o.s }
func (o mulScalarOp) fuseKernel() (string, float64)     { return "MulScalar", o.s }
func (o powScalarOp) fuseKernel() (string, float64)     { return "PowScalar", o.p }
func (o leakyReluOp) fuseKernel() (string, float64)     { return "LeakyRelu", o.slope }
func (o eluOp) fuseKernel() (string, float64)           { return "Elu", o.alpha }
func (sigmoidGradOp) fuseKernel() (string, float64)     { return "SigmoidGrad", 0 }
func (tanhGradOp) fuseKernel() (string, float64)        { return "TanhGrad", 0 }
func (reluGradOp) fuseKernel() (string, float64)        { return "ReluGrad", 0 }
func (geluGradOp) fuseKernel() (string, float64)        { return "GeluGrad", 0 }
func (o leakyReluGradOp) fuseKernel() (string, float64) { return "LeakyReluGrad", o.slope }

func (o extremumOp) fuseKernel() (string, float64) {
	if o.max {
		return "Maximum", 0
	}
	return "Minimum", 0
}

// The unary ops and comparisons are named as their kernels, in snake case
// ("log1p" is Log1p, "greater_equal" GreaterEqual).
func (o *unaryOp) fuseKernel() (string, float64)   { return camel(o.name), 0 }
func (o *compareOp) fuseKernel() (string, float64) { return camel(o.name), 0 }

func camel(s string) string {
	parts := strings.Split(s, "_")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

// operand is where an instruction reads a value: register reg when
// reg >= 0, else the fused step's input in.
type operand struct{ reg, in int }

// finstr is one instruction of a fused step: dst = run(x, y), y unused
// for unary kernels; dst < 0 is the step's output.
type finstr[T float32 | float64] struct {
	run  func(d, x, y []T)
	x, y operand
	dst  int
}

// fused is a fused step: its kernels in order, on registers of
// fusedBlock elements.
type fused[T float32 | float64] struct {
	names []string // the fused ops, in order
	ops   []Op     // the same ops, for Program.Build
	dt    tensor.DType
	shape []int
	size  int
	code  []finstr[T]
	nregs int
	nin   int
	data  func(*tensor.Tensor) []T

	ws  []*fusedWorker[T] // one per goroutine, kept between Runs
	ins []fusedIn[T]      // how the current Forward reads each input
}

// fusedWorker is one goroutine's scratch: registers and the gathered
// blocks of broadcast or strided inputs.
type fusedWorker[T float32 | float64] struct {
	regs   [][]T
	gather [][]T
	idx    []int
}

// fusedIn is how a Forward reads one input: a contiguous run of its
// backing array from base, or, when strided (a broadcast, a view), by
// gathering with strides aligned to the output's axes.
type fusedIn[T float32 | float64] struct {
	src     []T
	base    int
	strides []int // nil: contiguous
	buf     []int // strides' memory
}

func (f *fused[T]) Name() string { return "fused(" + strings.Join(f.names, ",") + ")" }

// Forward computes the chain into a new buffer, block by block.
func (f *fused[T]) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	out := g.AllocUninit(f.dt, f.shape...)
	dst := f.data(out)[out.Offset():][:f.size]
	if f.ins == nil {
		f.ins = make([]fusedIn[T], len(in))
	}
	ins := f.ins
	for i, t := range in {
		f.reader(&ins[i], t)
	}
	p := 1
	if f.size >= fusedParMin {
		p = min(runtime.GOMAXPROCS(0), f.size/(fusedParMin/2))
	}
	for len(f.ws) < p {
		f.ws = append(f.ws, f.newWorker())
	}
	if p < 2 {
		f.ws[0].run(f, dst, ins, 0, f.size)
		return out
	}
	chunk := (f.size/p + fusedBlock - 1) / fusedBlock * fusedBlock
	var wg sync.WaitGroup
	for w, lo := 1, chunk; lo < f.size; w, lo = w+1, lo+chunk {
		wg.Add(1)
		go func(w, lo, hi int) {
			defer wg.Done()
			f.ws[w].run(f, dst, ins, lo, hi)
		}(w, lo, min(lo+chunk, f.size))
	}
	f.ws[0].run(f, dst, ins, 0, min(chunk, f.size))
	wg.Wait()
	return out
}

// reader sets r to read input t: contiguous with the output's shape, or
// through strides aligned to the output's axes (0 where it broadcasts),
// kept in r's buffer between Runs.
func (f *fused[T]) reader(r *fusedIn[T], t *tensor.Tensor) {
	r.src, r.base = f.data(t), t.Offset()
	if slices.Equal(t.Shape(), f.shape) && t.IsContiguous() {
		r.strides = nil
		return
	}
	n := max(len(f.shape), 1)
	if cap(r.buf) < n {
		r.buf = make([]int, n)
	}
	st := r.buf[:n]
	clear(st)
	ts, tt := t.Shape(), t.Strides()
	lead := len(f.shape) - len(ts)
	for i, d := range ts {
		if d != 1 {
			st[lead+i] = tt[i]
		}
	}
	r.strides = st
}

func (f *fused[T]) newWorker() *fusedWorker[T] {
	w := &fusedWorker[T]{regs: make([][]T, f.nregs), gather: make([][]T, f.nin), idx: make([]int, max(len(f.shape), 1))}
	for i := range w.regs {
		w.regs[i] = make([]T, fusedBlock)
	}
	for i := range w.gather {
		w.gather[i] = make([]T, fusedBlock)
	}
	return w
}

// run computes output elements [lo, hi).
func (w *fusedWorker[T]) run(f *fused[T], dst []T, ins []fusedIn[T], lo, hi int) {
	shape := f.shape
	if len(shape) == 0 {
		shape = []int{1}
	}
	for b := lo; b < hi; b += fusedBlock {
		n := min(fusedBlock, hi-b)
		for i := range ins {
			if ins[i].strides != nil {
				gatherBlock(w.gather[i][:n], &ins[i], shape, w.idx, b)
			}
		}
		val := func(o operand) []T {
			if o.reg >= 0 {
				return w.regs[o.reg][:n]
			}
			if in := &ins[o.in]; in.strides == nil {
				return in.src[in.base+b : in.base+b+n]
			}
			return w.gather[o.in][:n]
		}
		for _, c := range f.code {
			d := dst[b : b+n]
			if c.dst >= 0 {
				d = w.regs[c.dst][:n]
			}
			y := []T(nil)
			if c.y.reg >= 0 || c.y.in >= 0 {
				y = val(c.y)
			}
			c.run(d, val(c.x), y)
		}
	}
}

// gatherBlock copies the elements of in at output positions [start,
// start+len(d)) of an output shaped shape into d; idx is scratch.
func gatherBlock[T float32 | float64](d []T, in *fusedIn[T], shape, idx []int, start int) {
	st := in.strides
	pos, r := in.base, start
	for a := len(shape) - 1; a >= 0; a-- {
		idx[a] = r % shape[a]
		r /= shape[a]
		pos += idx[a] * st[a]
	}
	last := len(shape) - 1
	s := st[last]
	for i := 0; i < len(d); {
		k := min(shape[last]-idx[last], len(d)-i)
		switch s {
		case 0:
			v := in.src[pos]
			for j := range d[i : i+k] {
				d[i+j] = v
			}
		case 1:
			copy(d[i:i+k], in.src[pos:pos+k])
		default:
			for j := range k {
				d[i+j] = in.src[pos+j*s]
			}
		}
		i += k
		pos += k * s
		idx[last] += k
		// Carry into the outer axes.
		for a := last; a > 0 && idx[a] == shape[a]; a-- {
			pos -= shape[a] * st[a]
			idx[a] = 0
			idx[a-1]++
			pos += st[a-1]
		}
	}
}

// stepKernel is what a program's step runs: an Op, or a fused chain.
type stepKernel interface {
	Name() string
	Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor
}

// fuseKernelOf returns the run kernels of step op when it is fusible.
func fuseKernelOf(op stepKernel) (f32 func(d, x, y []float32), f64 func(d, x, y []float64), ok bool) {
	f, isF := op.(fusible)
	if !isF {
		return nil, nil, false
	}
	name, p := f.fuseKernel()
	f32, f64 = kern.Run32(name, p), kern.Run64(name, p)
	return f32, f64, f32 != nil && f64 != nil
}

// fuse groups the program's elementwise steps into fused steps. Walking
// back from each not yet grouped elementwise step (the group's root), it
// takes in every earlier elementwise step of the root's shape and dtype
// whose output only the group reads (not a program output); the group
// runs where its root ran, reading what its members read from outside
// it.
func (p *Program) fuse() {
	n := len(p.steps)
	consumers := make([][]int, len(p.slots))
	isOut := make([]bool, len(p.slots))
	for i, s := range p.steps {
		for _, k := range s.in {
			consumers[k] = append(consumers[k], i)
		}
	}
	for _, k := range p.outs {
		isOut[k] = true
	}
	ok := make([]bool, n)
	for i := range p.steps {
		_, _, ok[i] = fuseKernelOf(p.steps[i].op)
	}
	group := make([]int, n) // 1 + the root's index, 0 outside any group
	var roots []int
	for r := n - 1; r >= 0; r-- {
		if group[r] != 0 || !ok[r] {
			continue
		}
		root := &p.slots[p.steps[r].out]
		group[r] = r + 1
		size := 1
		for j := r - 1; j >= 0; j-- {
			k := p.steps[j].out
			if group[j] != 0 || !ok[j] || isOut[k] || p.slots[k].dt != root.dt || !slices.Equal(p.slots[k].shape, root.shape) {
				continue
			}
			all := true
			for _, c := range consumers[k] {
				all = all && group[c] == r+1
			}
			if all {
				group[j] = r + 1
				size++
			}
		}
		if size < 2 {
			group[r] = 0
			continue
		}
		roots = append(roots, r)
	}
	if len(roots) == 0 {
		return
	}
	fusedAt := map[int]step{}
	for _, r := range roots {
		var members []int
		for j := 0; j <= r; j++ {
			if group[j] == r+1 {
				members = append(members, j)
			}
		}
		fusedAt[r] = p.fuseGroup(members)
		p.stats.Fused += len(members) - 1
	}
	steps := p.steps[:0:0]
	for i, s := range p.steps {
		switch {
		case group[i] == 0:
			steps = append(steps, s)
		case group[i] == i+1:
			steps = append(steps, fusedAt[i])
		default:
			p.slots[s.out].kind = slotFused
		}
	}
	p.steps = steps
	p.stats.Ops = len(steps)
}

// fuseGroup builds the fused step of members (step indices in order, the
// last the root).
func (p *Program) fuseGroup(members []int) step {
	root := p.steps[members[len(members)-1]]
	regOf := map[int]int{} // member output slot -> register
	inOf := map[int]int{}  // outside slot -> input index
	var in []int
	lastUse := map[int]int{} // member output slot -> last instruction reading it
	for c, m := range members {
		for _, k := range p.steps[m].in {
			lastUse[k] = c
		}
	}
	var free []int
	nregs := 0
	type instr struct {
		x, y operand
		dst  int
	}
	code := make([]instr, len(members))
	var names []string
	var ops []Op
	for c, m := range members {
		s := p.steps[m]
		names = append(names, s.op.Name())
		ops = append(ops, s.op.(Op))
		ops := [2]operand{{-1, -1}, {-1, -1}}
		for j, k := range s.in {
			if r, ok := regOf[k]; ok {
				ops[j] = operand{r, -1}
				continue
			}
			i, ok := inOf[k]
			if !ok {
				i = len(in)
				inOf[k] = i
				in = append(in, k)
			}
			ops[j] = operand{-1, i}
		}
		// Registers whose last reader is this instruction are free for
		// its result: the kernels work in place.
		for _, k := range s.in {
			if r, ok := regOf[k]; ok && lastUse[k] == c {
				free = append(free, r)
				delete(regOf, k)
			}
		}
		dst := -1
		if c < len(members)-1 {
			if len(free) > 0 {
				dst, free = free[len(free)-1], free[:len(free)-1]
			} else {
				dst = nregs
				nregs++
			}
			regOf[s.out] = dst
		}
		code[c] = instr{ops[0], ops[1], dst}
	}
	o := p.slots[root.out]
	var k stepKernel
	if o.dt == tensor.Float32 {
		f := &fused[float32]{names: names, ops: ops, dt: o.dt, shape: o.shape, size: shapeSize(o.shape), nregs: nregs, nin: len(in), data: kern.Data32}
		for c, m := range members {
			run, _, _ := fuseKernelOf(p.steps[m].op)
			f.code = append(f.code, finstr[float32]{run, code[c].x, code[c].y, code[c].dst})
		}
		k = f
	} else {
		f := &fused[float64]{names: names, ops: ops, dt: o.dt, shape: o.shape, size: shapeSize(o.shape), nregs: nregs, nin: len(in), data: kern.Data64}
		for c, m := range members {
			_, run, _ := fuseKernelOf(p.steps[m].op)
			f.code = append(f.code, finstr[float64]{run, code[c].x, code[c].y, code[c].dst})
		}
		k = f
	}
	return step{op: k, in: in, out: root.out, args: make([]*tensor.Tensor, len(in)), own: -1}
}
