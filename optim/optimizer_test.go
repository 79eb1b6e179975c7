package optim

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// kinds covers every optimiser and every optional state buffer.
var kinds = []struct {
	name  string
	make  func(p []*tensor.Tensor) Optimizer
	slots []string // per-parameter buffer names
}{
	{"SGD", func(p []*tensor.Tensor) Optimizer { return NewSGD(p, SGDOptions{LR: 0.1}) }, nil},
	{"SGD momentum", func(p []*tensor.Tensor) Optimizer {
		return NewSGD(p, SGDOptions{LR: 0.1, Momentum: 0.9, Dampening: 0.1, WeightDecay: 0.01})
	}, []string{"momentum_buffer"}},
	{"SGD nesterov", func(p []*tensor.Tensor) Optimizer {
		return NewSGD(p, SGDOptions{LR: 0.1, Momentum: 0.9, Nesterov: true})
	}, []string{"momentum_buffer"}},
	{"Adam", func(p []*tensor.Tensor) Optimizer { return NewAdam(p, AdamOptions{LR: 0.01, WeightDecay: 0.1}) },
		[]string{"exp_avg", "exp_avg_sq"}},
	{"Adam AMSGrad", func(p []*tensor.Tensor) Optimizer { return NewAdam(p, AdamOptions{LR: 0.01, AMSGrad: true}) },
		[]string{"exp_avg", "exp_avg_sq", "max_exp_avg_sq"}},
	{"AdamW", func(p []*tensor.Tensor) Optimizer { return NewAdamW(p, AdamOptions{LR: 0.01}) },
		[]string{"exp_avg", "exp_avg_sq"}},
	{"RMSProp", func(p []*tensor.Tensor) Optimizer {
		return NewRMSProp(p, RMSPropOptions{Momentum: 0.5, Centered: true, WeightDecay: 0.1})
	}, []string{"square_avg", "momentum_buffer", "grad_avg"}},
	{"Adagrad", func(p []*tensor.Tensor) Optimizer {
		return NewAdagrad(p, AdagradOptions{LRDecay: 0.1, InitialAccumulator: 0.1})
	}, []string{"sum"}},
}

// names names the two parameters of problem.
var names = []string{"fc.weight", "fc.bias"}

// problem returns two parameters of shapes (2, 3) and (4) and a function
// giving deterministic gradients for step k.
func problem(dt tensor.DType, seed uint64) ([]*tensor.Tensor, func(k int) []*tensor.Tensor) {
	rng := tensor.NewRNG(seed)
	params := []*tensor.Tensor{rng.Normal(dt, 0, 1, 2, 3), rng.Normal(dt, 0, 1, 4)}
	var grads [][]*tensor.Tensor
	for k := 0; k < 8; k++ {
		grads = append(grads, []*tensor.Tensor{rng.Normal(dt, 0, 1, 2, 3), rng.Normal(dt, 0, 1, 4)})
	}
	return params, func(k int) []*tensor.Tensor { return grads[k] }
}

func cloneAll(ts []*tensor.Tensor) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(ts))
	for i, t := range ts {
		out[i] = t.Clone()
	}
	return out
}

// requireBitEqual compares element by element, exactly.
func requireBitEqual(t *testing.T, want, got *tensor.Tensor, msg ...any) {
	t.Helper()
	require.Equal(t, want.DType(), got.DType(), msg...)
	require.Equal(t, want.Shape(), got.Shape(), msg...)
	w, g := want.Values(), got.Values()
	for i := range w {
		require.Equal(t, math.Float64bits(w[i]), math.Float64bits(g[i]), "element %d: want %v got %v %v", i, w[i], g[i], fmt.Sprint(msg...))
	}
}

func requireStateEqual(t *testing.T, want, got map[string]*tensor.Tensor) {
	t.Helper()
	require.Equal(t, len(want), len(got))
	for name, w := range want {
		require.Contains(t, got, name)
		requireBitEqual(t, w, got[name], name)
	}
}

func TestStateNames(t *testing.T) {
	for _, k := range kinds {
		for _, dt := range numtest.DTypes {
			t.Run(fmt.Sprintf("%s/%v", k.name, dt), func(t *testing.T) {
				params, _ := problem(dt, 1)
				st := k.make(params).State(names)
				require.Len(t, st, 2+2*len(k.slots))
				require.Equal(t, 0.0, st["step"].Item())
				for i, p := range params {
					for _, s := range k.slots {
						b := st[names[i]+"."+s]
						require.NotNil(t, b, "%s.%s", names[i], s)
						require.Equal(t, p.Shape(), b.Shape())
						require.Equal(t, dt, b.DType())
					}
				}
			})
		}
	}
}

// Three steps, save, two more must equal a fresh optimiser restored from
// the save taking the same two steps, bit for bit.
func TestStateRoundTrip(t *testing.T) {
	for _, k := range kinds {
		for _, dt := range numtest.DTypes {
			t.Run(fmt.Sprintf("%s/%v", k.name, dt), func(t *testing.T) {
				params, grads := problem(dt, 2)
				a := k.make(params)
				for s := 0; s < 3; s++ {
					require.NoError(t, a.Step(grads(s)))
				}
				saved := a.State(names)
				savedParams := cloneAll(params)
				require.Equal(t, 3.0, saved["step"].Item())
				for s := 3; s < 5; s++ {
					require.NoError(t, a.Step(grads(s)))
				}
				// The saved copies must not have moved with the optimiser.
				require.Equal(t, 3.0, saved["step"].Item())

				b := k.make(savedParams)
				b.SetLR(123) // LoadState restores the rate too
				require.NoError(t, b.LoadState(names, saved))
				require.Equal(t, a.LR(), b.LR())
				for s := 3; s < 5; s++ {
					require.NoError(t, b.Step(grads(s)))
				}
				for i := range params {
					requireBitEqual(t, params[i], savedParams[i], "param", i)
				}
				requireStateEqual(t, a.State(names), b.State(names))
			})
		}
	}
}

// A state saved with the parameters in one order restores into an
// optimiser over the same parameters listed the other way round: each
// buffer goes to the parameter of its name, and the next steps are bit for
// bit those of the original.
func TestLoadStateOtherOrder(t *testing.T) {
	for _, k := range kinds {
		for _, dt := range numtest.DTypes {
			t.Run(fmt.Sprintf("%s/%v", k.name, dt), func(t *testing.T) {
				params, grads := problem(dt, 5)
				a := k.make(params)
				for s := 0; s < 3; s++ {
					require.NoError(t, a.Step(grads(s)))
				}
				saved := a.State(names)
				w, b := params[0].Clone(), params[1].Clone()
				for s := 3; s < 5; s++ {
					require.NoError(t, a.Step(grads(s)))
				}
				swapped := k.make([]*tensor.Tensor{b, w})
				require.NoError(t, swapped.LoadState([]string{"fc.bias", "fc.weight"}, saved))
				for s := 3; s < 5; s++ {
					g := grads(s)
					require.NoError(t, swapped.Step([]*tensor.Tensor{g[1], g[0]}))
				}
				requireBitEqual(t, params[0], w, "fc.weight")
				requireBitEqual(t, params[1], b, "fc.bias")
				requireStateEqual(t, a.State(names), swapped.State([]string{"fc.bias", "fc.weight"}))
			})
		}
	}
}

func TestStateNamesMisuse(t *testing.T) {
	params, _ := problem(tensor.Float64, 6)
	opt := NewAdam(params, AdamOptions{})
	for _, c := range []struct {
		names []string
		msg   string
	}{
		{[]string{"fc.weight"}, "got 1 names for 2 parameters"},
		{[]string{"w", "w"}, `name 1 ("w")`},
		{[]string{"", "b"}, `name 0 ("")`},
		{[]string{"step", "b"}, `name 0 ("step")`},
	} {
		var te *tensor.Error
		func() {
			defer func() { te, _ = recover().(*tensor.Error) }()
			opt.State(c.names)
		}()
		require.NotNil(t, te, "%v", c.names)
		assert.Contains(t, te.Error(), "Adam.State")
		assert.Contains(t, te.Error(), c.msg)
	}
}

func TestLoadStateRejects(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(st map[string]*tensor.Tensor, dt tensor.DType)
		msg    string
	}{
		{"missing buffer", func(st map[string]*tensor.Tensor, _ tensor.DType) { delete(st, "fc.bias.exp_avg") }, `missing "fc.bias.exp_avg"`},
		{"missing step", func(st map[string]*tensor.Tensor, _ tensor.DType) { delete(st, "step") }, `missing "step"`},
		{"unknown name", func(st map[string]*tensor.Tensor, dt tensor.DType) { st["fc.weight.momentum"] = tensor.Zeros(dt, 2, 3) }, "unknown state entries fc.weight.momentum"},
		{"wrong shape", func(st map[string]*tensor.Tensor, dt tensor.DType) { st["fc.weight.exp_avg"] = tensor.Zeros(dt, 3, 2) }, `"fc.weight.exp_avg" has shape (3, 2)`},
		{"wrong dtype", func(st map[string]*tensor.Tensor, dt tensor.DType) {
			other := tensor.Float64
			if dt == other {
				other = tensor.Float32
			}
			st["fc.bias.exp_avg_sq"] = tensor.Zeros(other, 4)
		}, `"fc.bias.exp_avg_sq" has shape (4,)`},
		{"fractional step", func(st map[string]*tensor.Tensor, _ tensor.DType) { st["step"] = tensor.Scalar(tensor.Float64, 2.5) }, "non-negative integer"},
		{"negative lr", func(st map[string]*tensor.Tensor, _ tensor.DType) { st["lr"] = tensor.Scalar(tensor.Float64, -1) }, `"lr" is -1`},
	}
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				params, grads := problem(dt, 3)
				opt := NewAdam(params, AdamOptions{LR: 0.01})
				require.NoError(t, opt.Step(grads(0)))
				other := NewAdam(cloneAll(params), AdamOptions{LR: 0.5})
				require.NoError(t, other.Step(grads(1)))
				require.NoError(t, other.Step(grads(2)))
				st := other.State(names)
				c.mutate(st, dt)
				before := opt.State(names)
				err := opt.LoadState(names, st)
				require.Error(t, err)
				require.ErrorIs(t, err, ErrMismatch)
				require.Contains(t, err.Error(), c.msg)
				requireStateEqual(t, before, opt.State(names))
			})
		}
	}
}

// A buffer with NaN or ±Inf, or a negative value in a buffer of squares,
// would make the next step turn the parameters into NaN: every optimiser
// refuses it for every buffer, naming the entry and the element, and keeps
// its state.
func TestLoadStateRefusesPoisonedBuffers(t *testing.T) {
	squares := map[string]bool{"exp_avg_sq": true, "max_exp_avg_sq": true, "square_avg": true, "sum": true}
	for _, k := range kinds {
		for _, slot := range k.slots {
			for _, c := range []struct {
				name string
				v    float64
				is   error
			}{
				{"NaN", math.NaN(), ErrNonFinite},
				{"+Inf", math.Inf(1), ErrNonFinite},
				{"-Inf", math.Inf(-1), ErrNonFinite},
				{"negative", -0.5, ErrMismatch},
			} {
				for _, dt := range numtest.DTypes {
					t.Run(fmt.Sprintf("%s/%s/%s/%v", k.name, slot, c.name, dt), func(t *testing.T) {
						params, grads := problem(dt, 4)
						opt := k.make(params)
						require.NoError(t, opt.Step(grads(0)))
						st := opt.State(names)
						key := "fc.bias." + slot
						bad := st[key].Clone()
						tensor.CopyInto(bad, tensor.FromValues(dt, []float64{1, 2, c.v, 4}, 4))
						st[key] = bad
						before := opt.State(names)
						err := opt.LoadState(names, st)
						if c.name == "negative" && !squares[slot] {
							require.NoError(t, err, "a negative %s is a valid state", slot)
							return
						}
						require.Error(t, err)
						assert.ErrorIs(t, err, c.is)
						assert.Contains(t, err.Error(), fmt.Sprintf("%q holds %g at element 2 of 4", key, c.v))
						requireStateEqual(t, before, opt.State(names))
					})
				}
			}
		}
	}
}

func TestStepRejects(t *testing.T) {
	cases := []struct {
		name  string
		grads func(good []*tensor.Tensor, dt tensor.DType) []*tensor.Tensor
		is    error
		msg   []string
	}{
		{"too few", func(g []*tensor.Tensor, _ tensor.DType) []*tensor.Tensor { return g[:1] },
			ErrMismatch, []string{"got 1 gradients for 2 parameters"}},
		{"wrong shape", func(g []*tensor.Tensor, dt tensor.DType) []*tensor.Tensor {
			return []*tensor.Tensor{g[0], tensor.Zeros(dt, 2, 2)}
		}, ErrMismatch, []string{"parameter 1", "shape (2, 2)", "shape (4,)"}},
		{"wrong dtype", func(g []*tensor.Tensor, dt tensor.DType) []*tensor.Tensor {
			other := tensor.Float64
			if dt == other {
				other = tensor.Float32
			}
			return []*tensor.Tensor{g[0].Cast(other), g[1]}
		}, ErrMismatch, []string{"gradient of parameter 0 has shape (2, 3)", "the parameter has shape (2, 3)"}},
		{"nil", func(g []*tensor.Tensor, _ tensor.DType) []*tensor.Tensor { return []*tensor.Tensor{g[0], nil} },
			ErrMismatch, []string{"parameter 1 is nil"}},
		{"non-contiguous", func(g []*tensor.Tensor, dt tensor.DType) []*tensor.Tensor {
			return []*tensor.Tensor{tensor.Transpose(tensor.Zeros(dt, 3, 2)), g[1]}
		}, ErrMismatch, []string{"parameter 0", "not contiguous"}},
		{"NaN", func(g []*tensor.Tensor, _ tensor.DType) []*tensor.Tensor {
			bad := g[1].Clone()
			bad.SetAt(math.NaN(), 2)
			return []*tensor.Tensor{g[0], bad}
		}, ErrNonFinite, []string{"parameter 1", "NaN/Inf", "element 2"}},
		{"Inf", func(g []*tensor.Tensor, _ tensor.DType) []*tensor.Tensor {
			bad := g[0].Clone()
			bad.SetAt(math.Inf(-1), 1, 2)
			return []*tensor.Tensor{bad, g[1]}
		}, ErrNonFinite, []string{"parameter 0", "NaN/Inf", "element 5"}},
	}
	for _, k := range kinds {
		for _, c := range cases {
			for _, dt := range numtest.DTypes {
				t.Run(fmt.Sprintf("%s/%s/%v", k.name, c.name, dt), func(t *testing.T) {
					params, grads := problem(dt, 4)
					opt := k.make(params)
					require.NoError(t, opt.Step(grads(0)))
					before, beforeParams := opt.State(names), cloneAll(params)
					err := opt.Step(c.grads(grads(1), dt))
					require.Error(t, err)
					require.ErrorIs(t, err, c.is)
					var oe *Error
					require.ErrorAs(t, err, &oe)
					for _, m := range c.msg {
						require.Contains(t, err.Error(), m)
					}
					requireStateEqual(t, before, opt.State(names))
					for i := range params {
						requireBitEqual(t, beforeParams[i], params[i], "param", i)
					}
				})
			}
		}
	}
}

func TestStepDoesNotAllocate(t *testing.T) {
	for _, k := range kinds {
		for _, dt := range numtest.DTypes {
			t.Run(fmt.Sprintf("%s/%v", k.name, dt), func(t *testing.T) {
				params, grads := problem(dt, 5)
				opt := k.make(params)
				g := grads(0)
				require.NoError(t, opt.Step(g))
				allocs := testing.AllocsPerRun(20, func() {
					if err := opt.Step(g); err != nil {
						panic(err)
					}
				})
				require.Zero(t, allocs)
			})
		}
	}
}

func TestConstructorMisusePanics(t *testing.T) {
	cases := []struct {
		name string
		make func(p []*tensor.Tensor)
		msg  string
	}{
		{"nesterov without momentum", func(p []*tensor.Tensor) { NewSGD(p, SGDOptions{LR: 0.1, Nesterov: true}) }, "Nesterov"},
		{"nesterov with dampening", func(p []*tensor.Tensor) {
			NewSGD(p, SGDOptions{LR: 0.1, Momentum: 0.9, Dampening: 0.1, Nesterov: true})
		}, "Dampening"},
		{"negative lr", func(p []*tensor.Tensor) { NewAdam(p, AdamOptions{LR: -1}) }, "learning rate -1"},
		{"beta1 = 1", func(p []*tensor.Tensor) { NewAdamW(p, AdamOptions{Beta1: 1}) }, "Beta1 1"},
		{"alpha NaN", func(p []*tensor.Tensor) { NewRMSProp(p, RMSPropOptions{Alpha: math.NaN()}) }, "Alpha NaN"},
		{"negative accumulator", func(p []*tensor.Tensor) { NewAdagrad(p, AdagradOptions{InitialAccumulator: -1}) }, "InitialAccumulator"},
		{"non-contiguous parameter", func(p []*tensor.Tensor) {
			NewSGD([]*tensor.Tensor{p[0], tensor.Transpose(p[0])}, SGDOptions{})
		}, "parameter 1 of shape (3, 2) is not contiguous"},
		{"no parameters", func(p []*tensor.Tensor) { NewAdam(nil, AdamOptions{}) }, "no parameters"},
	}
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				params, _ := problem(dt, 6)
				err := func() (err error) {
					defer tensor.Recover(&err)
					c.make(params)
					return nil
				}()
				var te *tensor.Error
				require.True(t, errors.As(err, &te), "want a *tensor.Error panic, got %v", err)
				require.Contains(t, err.Error(), c.msg)
			})
		}
	}
}

func TestDefaultsAndNoDefaults(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			p := []*tensor.Tensor{vals(dt, 1, -2)}
			assert.Equal(t, 1e-3, NewSGD(p, SGDOptions{}).LR())
			assert.Equal(t, 1e-3, NewAdam(p, AdamOptions{}).LR())
			assert.Equal(t, 1e-2, NewRMSProp(p, RMSPropOptions{}).LR())
			assert.Equal(t, 1e-2, NewAdagrad(p, AdagradOptions{}).LR())
			assert.Equal(t, AdamOptions{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, NewAdam(p, AdamOptions{}).cfg)
			assert.Equal(t, 1e-2, NewAdamW(p, AdamOptions{}).cfg.WeightDecay)

			// NoDefaults: LR 0 is a real 0, so SGD does not move.
			q := vals(dt, 1, -2)
			require.NoError(t, NewSGD([]*tensor.Tensor{q}, SGDOptions{NoDefaults: true}).Step([]*tensor.Tensor{vals(dt, 0.5, 0.1)}))
			assert.Equal(t, []float64{1, -2}, q.Values())

			// NoDefaults with Beta1 0: m = g, so step 2 is 0.1·g₂/√(v̂₂) with
			// v̂₂ = (0.00028975, 0.00009999)/0.001999 = (0.144947474, 0.050020010):
			// 0.1·(−0.2/0.380719691, 0.3/0.223651537) = (−0.052532089, 0.134137240).
			q = vals(dt, 1, -2)
			opt := NewAdam([]*tensor.Tensor{q}, AdamOptions{LR: 0.1, Beta1: 0, Beta2: 0.999, Eps: 0, NoDefaults: true})
			require.NoError(t, opt.Step([]*tensor.Tensor{vals(dt, 0.5, 0.1)}))
			require.NoError(t, opt.Step([]*tensor.Tensor{vals(dt, -0.2, 0.3)}))
			assert.InDeltaSlice(t, []float64{0.9 + 0.052532089, -2.1 - 0.134137240}, q.Values(), 1e-8+numtest.Tol(dt))
		})
	}
}

// A parameter large enough to be split over the cores gets the bits a
// serial update gives it, for every optimiser and dtype: each kind takes
// three steps on 3·updateMin+5 elements with GOMAXPROCS 1 and with 4.
func TestSplitUpdateMatchesSerial(t *testing.T) {
	n := 3*updateMin + 5
	for _, k := range kinds {
		for _, dt := range numtest.DTypes {
			run := func(procs int) *tensor.Tensor {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				rng := tensor.NewRNG(7)
				p := rng.Normal(dt, 0, 1, n)
				opt := k.make([]*tensor.Tensor{p})
				for range 3 {
					require.NoError(t, opt.Step([]*tensor.Tensor{rng.Normal(dt, 0, 1, n)}))
				}
				return p
			}
			requireBitEqual(t, run(1), run(4), k.name+" "+dt.String(), 0)
		}
	}
}
