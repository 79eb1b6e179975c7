package graph

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gradus-ml/gradus/tensor"
)

// Step describes one op of a Program: Run calls Op's Forward on the
// values of the Inputs slots and stores the result in the Output slot.
// Slots are numbered as in String: inputs, constants and step outputs in
// the order the step was traced.
type Step struct {
	Op      string       // the op's name; a fused step's lists its ops, e.g. "fused(mul,add)"
	Inputs  []int        // the slots it reads
	Output  int          // the slot it writes
	Shape   []int        // the output's shape
	DType   tensor.DType // the output's dtype
	Buffers []int        // the indices in Plan().Buffers of the buffers its Forward asks for
}

// Steps lists the program's ops in the order Run executes them.
func (p *Program) Steps() []Step {
	out := make([]Step, len(p.steps))
	for i, s := range p.steps {
		o := p.slots[s.out]
		st := Step{Op: s.op.Name(), Inputs: slices.Clone(s.in), Output: s.out, Shape: slices.Clone(o.shape), DType: o.dt}
		for k := s.reqs[0]; k < s.reqs[1]; k++ {
			st.Buffers = append(st.Buffers, k)
		}
		out[i] = st
	}
	return out
}

// Plan returns the buffer plan: where each step's buffers live in the
// arenas, and how much memory the arenas take.
func (p *Program) Plan() BufferPlan {
	pl := p.plan
	pl.Buffers = slices.Clone(pl.Buffers)
	return pl
}

// Outputs returns the slots Run returns, in the order the step returned
// its nodes.
func (p *Program) Outputs() []int { return slices.Clone(p.outs) }

// String dumps the program: one line per slot (inputs, constants and
// steps with their buffers), the outputs, and the plan's totals, e.g.
//
//	%0 = input 0 float32 (128, 784)
//	%3 = const float32 ()
//	%4 = linear(%0, %1, %2) float32 (128, 128)  buf 0 @0
func (p *Program) String() string {
	var b strings.Builder
	st := p.stats
	fmt.Fprintf(&b, "program: %d steps, %d slots; traced %d nodes: %d dead, %d folded, %d merged, %d fused; %d concat views, %d products on packed operands\n",
		st.Ops, len(p.slots), st.Traced, st.Dead, st.Folded, st.Merged, st.Fused, st.Views, st.Packed)
	stepOf := make([]int, len(p.slots))
	for i := range stepOf {
		stepOf[i] = -1
	}
	for i, s := range p.steps {
		stepOf[s.out] = i
	}
	for i, s := range p.slots {
		what := ""
		switch s.kind {
		case slotInput:
			what = fmt.Sprintf("input %d", s.input)
		case slotConst:
			what = "const"
		case slotFused:
			what = "(computed inside a fused step)"
		case slotDead:
			what = "(removed: nothing reads it after the rewrites)"
		default:
			st := &p.steps[stepOf[i]]
			args := make([]string, len(st.in))
			for j, k := range st.in {
				args[j] = fmt.Sprintf("%%%d", k)
			}
			what = st.op.Name() + "(" + strings.Join(args, ", ") + ")"
		}
		fmt.Fprintf(&b, "%%%d = %s %v %s", i, what, s.dt, tensor.FormatShape(s.shape))
		if k := stepOf[i]; k >= 0 {
			st := &p.steps[k]
			for r := st.reqs[0]; r < st.reqs[1]; r++ {
				buf := p.plan.Buffers[r]
				fmt.Fprintf(&b, "  buf %d @%d", r, buf.Offset)
				if !buf.Result {
					b.WriteString(" (scratch)")
				}
			}
			if st.own < 0 {
				b.WriteString("  view")
			}
		}
		b.WriteByte('\n')
	}
	outs := make([]string, len(p.outs))
	for i, k := range p.outs {
		outs[i] = fmt.Sprintf("%%%d", k)
	}
	fmt.Fprintf(&b, "outputs: %s\n", strings.Join(outs, " "))
	fmt.Fprintf(&b, "buffers: %d, arena %d bytes (unshared %d), constants %d bytes\n",
		len(p.plan.Buffers), p.plan.ArenaBytes, p.plan.NaiveBytes, p.plan.ConstBytes)
	return b.String()
}
