package autodiff_test

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

var modes = []string{autodiff.ModeVJP, autodiff.ModeJVP, autodiff.ModeVJP2, autodiff.ModeJVPofVJP}

// seedOf gives every op its own reproducible random stream.
func seedOf(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

func caseLabel(op string, i int, c opCase) string {
	if c.name != "" {
		return op + "/" + c.name
	}
	return fmt.Sprintf("%s/%d", op, i)
}

// TestGradCheckAllOps checks every registered op's VJP and JVP against
// finite differences, to second order unless a case opts out, in float64.
// Run with -v to see one line per op and mode.
func TestGradCheckAllOps(t *testing.T) {
	checkRegistryCovered(t)
	for _, op := range graph.Registered() {
		name := op.Name()
		cases := opCases[name]
		if len(cases) == 0 {
			continue // reported by checkRegistryCovered
		}
		t.Run(name, func(t *testing.T) {
			worst := map[string]float64{}
			for i, c := range cases {
				label := caseLabel(name, i, c)
				order := 2
				if c.noSecondOrder {
					order = 1
				}
				rep, err := autodiff.GradCheck(c.f, c.inputs(tensor.NewRNG(seedOf(label))), autodiff.GradCheckOptions{
					Name: label, Order: order, Tol: c.tol, Tol2: c.tol, Seed: seedOf(label) + 1,
				})
				if err != nil {
					t.Errorf("case %s: %v", label, err)
					continue
				}
				for _, m := range modes {
					e := rep.MaxRelErr(m)
					if w, seen := worst[m]; !math.IsNaN(e) && (!seen || e > w) {
						worst[m] = e
					}
				}
			}
			for _, m := range modes {
				if e, ok := worst[m]; ok {
					t.Logf("op=%s mode=%s maxrelerr=%.3g", name, m, e)
				}
			}
		})
	}
}

// TestGradCheckAllOpsFloat32 is a first-order smoke test of every case in
// float32: finite differences in single precision are only good to a few
// digits, so the tolerance is loose; it catches rules that break or lose
// the dtype in float32.
func TestGradCheckAllOpsFloat32(t *testing.T) {
	for _, op := range graph.Registered() {
		for i, c := range opCases[op.Name()] {
			label := caseLabel(op.Name(), i, c)
			inputs := c.inputs(tensor.NewRNG(seedOf(label)))
			for k, in := range inputs {
				inputs[k] = in.Cast(tensor.Float32)
			}
			_, err := autodiff.GradCheck(c.f, inputs, autodiff.GradCheckOptions{
				Name: label, Order: 1, Tol: math.Max(5e-2, c.tol), Seed: seedOf(label) + 1,
			})
			if err != nil {
				t.Errorf("float32 case %s: %v", label, err)
			}
		}
	}
}

// checkRegistryCovered fails for registered ops without a case and for
// cases of ops that are not registered (a typo would skip the check).
func checkRegistryCovered(t *testing.T) {
	t.Helper()
	registered := map[string]bool{}
	var missing []string
	for _, op := range graph.Registered() {
		registered[op.Name()] = true
		if len(opCases[op.Name()]) == 0 {
			missing = append(missing, op.Name())
		}
	}
	if len(missing) > 0 {
		t.Errorf("registered ops without a gradient-check case in opCases: %v", missing)
	}
	var unknown []string
	for name := range opCases {
		if !registered[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		t.Errorf("opCases has cases for ops that are not registered: %v", unknown)
	}
}
