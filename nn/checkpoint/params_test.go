package checkpoint

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// dict is a Module whose parameters are the given tensors, in name order,
// for tests that need a state dict of a particular shape.
type dict map[string]*tensor.Tensor

func (d dict) Params() []nn.NamedParam {
	var ps []nn.NamedParam
	for _, name := range sortedKeys(d) {
		ps = append(ps, nn.NamedParam{Name: name, Param: nn.NewParam(d[name])})
	}
	return ps
}

func (d dict) SetTraining(bool) {}

// model returns fresh parameters with distinct values: fc.weight (2, 3),
// fc.bias (2) and a scalar scale.
func model(dt tensor.DType, offset float64) dict {
	return dict{
		"fc.weight": tensor.FromValues(dt, []float64{1 + offset, 2, 3, 4, 5, 6}, 2, 3),
		"fc.bias":   tensor.FromValues(dt, []float64{-1 + offset, -2}, 2),
		"scale":     tensor.Scalar(dt, 0.5+offset),
	}
}

// snapshot copies the values of params.
func snapshot(params map[string]*tensor.Tensor) map[string][]float64 {
	s := map[string][]float64{}
	for k, v := range params {
		s[k] = v.Values()
	}
	return s
}

// run is a model with every kind of state a checkpoint holds: parameters,
// a dropout stream and an Adam optimiser that has taken steps.
type run struct {
	m    *nn.Sequential
	drop *tensor.RNG
	opt  *optim.Adam
}

// newRun builds the model from seed and takes steps Adam steps on a fixed
// loss, so runs of different seeds or step counts hold different state.
func newRun(dt tensor.DType, seed uint64, steps int) run {
	rng := tensor.NewRNG(seed)
	drop := tensor.NewRNG(seed + 100)
	m := nn.NewSequential(nn.NewLinear(rng, 3, 4, true, dt), nn.NewDropout(drop, 0.5), nn.NewLinear(rng, 4, 1, true, dt))
	opt := optim.NewAdam(nn.Values(m.Params()), optim.AdamOptions{LR: 0.01})
	x := tensor.FromValues(dt, []float64{1, 2, 3, -1, 0.5, 2}, 2, 3)
	for range steps {
		g := graph.New()
		loss := graph.Sum(m.Forward(g.Const(x)), nil, false)
		if err := opt.Step(nn.Gradients(loss, m.Params())); err != nil {
			panic(err)
		}
	}
	return run{m: m, drop: drop, opt: opt}
}

// all captures everything LoadInto may change: parameters, the optimiser
// state and the dropout stream's state.
func (r run) all() map[string]any {
	out := map[string]any{}
	for k, v := range nn.State(r.m) {
		out[k] = v.Values()
	}
	for k, v := range r.opt.State(nn.Names(r.m.Params())) {
		out["optim."+k] = v.Values()
	}
	b, err := r.drop.MarshalBinary()
	if err != nil {
		panic(err)
	}
	out["rng"] = b
	return out
}

// Save then LoadInto restores parameters, optimiser state and the dropout
// stream into a run of other weights, so both continue identically, and
// returns the metadata.
func TestSaveLoadIntoRestoresEverything(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.safetensors")
			src := newRun(dt, 1, 3)
			require.NoError(t, Save(path, src.m, SaveOptions{Optimizer: src.opt, Metadata: map[string]string{"epoch": "4"}}))

			raw, meta, err := ReadFile(path)
			require.NoError(t, err)
			assert.Contains(t, raw, "0.weight")
			assert.Contains(t, raw, "optim.0.weight.exp_avg")
			assert.Contains(t, raw, "optim.step")
			assert.Len(t, meta["rng.1.mask"], 40, "20 bytes of PCG state in hexadecimal")

			dst := newRun(dt, 2, 5)
			require.NotEqual(t, src.all(), dst.all())
			got, err := LoadInto(path, dst.m, LoadOptions{Optimizer: dst.opt})
			require.NoError(t, err)
			assert.Equal(t, meta, got)
			assert.Equal(t, "4", got["epoch"])
			assert.Equal(t, src.all(), dst.all())

			// The restored dropout draws the masks the original draws.
			x := tensor.Ones(dt, 2, 4)
			a := src.m.Layer(1).Forward(graph.New().Const(x)).Value().Values()
			b := dst.m.Layer(1).Forward(graph.New().Const(x)).Value().Values()
			assert.Equal(t, a, b)
		})
	}
}

// Without an optimiser, LoadInto restores the model and ignores the
// optimiser state in the file; a file without random streams (weights from
// elsewhere) leaves the model's streams as they are.
func TestLoadIntoModelOnly(t *testing.T) {
	dir := t.TempDir()
	src := newRun(tensor.Float32, 1, 2)
	path := filepath.Join(dir, "full.safetensors")
	require.NoError(t, Save(path, src.m, SaveOptions{Optimizer: src.opt}))
	dst := newRun(tensor.Float32, 2, 0)
	optBefore := dst.opt.State(nn.Names(dst.m.Params()))
	_, err := LoadInto(path, dst.m, LoadOptions{})
	require.NoError(t, err)
	assert.Equal(t, snapshot(nn.State(src.m)), snapshot(nn.State(dst.m)))
	assert.Equal(t, src.all()["rng"], dst.all()["rng"])
	assert.Equal(t, snapshot(optBefore), snapshot(dst.opt.State(nn.Names(dst.m.Params()))))

	weights := filepath.Join(dir, "weights.safetensors")
	require.NoError(t, WriteFile(weights, nn.State(src.m), nil))
	other := newRun(tensor.Float32, 3, 0)
	rngBefore := other.all()["rng"]
	_, err = LoadInto(weights, other.m, LoadOptions{})
	require.NoError(t, err)
	assert.Equal(t, snapshot(nn.State(src.m)), snapshot(nn.State(other.m)))
	assert.Equal(t, rngBefore, other.all()["rng"])
}

// Every way a checkpoint can be wrong, in the model's tensors, the
// optimiser's, the random streams or the caller's metadata check, is
// refused with an error naming the file and the entry, and changes
// nothing: neither parameters, nor optimiser, nor streams. (With the
// two-step pattern of old, a bad optimiser entry left the parameters
// overwritten: half a restore.)
func TestLoadIntoAllOrNothing(t *testing.T) {
	type file struct {
		ts   map[string]*tensor.Tensor
		meta map[string]string
	}
	cases := []struct {
		name  string
		edit  func(f file, dt tensor.DType)
		check func(map[string]string) error
		is    error
		wants []string
	}{
		{"NaN moment", func(f file, _ tensor.DType) {
			tensor.CopyInto(f.ts["optim.0.bias.exp_avg"], tensor.Full(f.ts["0.bias"].DType(), math.NaN(), 4))
		}, nil, optim.ErrNonFinite, []string{`optimiser state`, `"0.bias.exp_avg" holds NaN at element 0 of 4`}},
		{"negative second moment", func(f file, dt tensor.DType) {
			f.ts["optim.2.weight.exp_avg_sq"] = tensor.Full(dt, -1, 1, 4)
		}, nil, optim.ErrMismatch, []string{`"2.weight.exp_avg_sq" holds -1`}},
		{"missing moment", func(f file, _ tensor.DType) { delete(f.ts, "optim.0.weight.exp_avg") },
			nil, optim.ErrMismatch, []string{`missing "0.weight.exp_avg"`}},
		{"negative optimiser step", func(f file, _ tensor.DType) { f.ts["optim.step"] = tensor.Scalar(tensor.Float64, -5) },
			nil, optim.ErrMismatch, []string{`"step" is -5`}},
		{"NaN parameter", func(f file, _ tensor.DType) {
			tensor.CopyInto(f.ts["2.bias"], tensor.Full(f.ts["2.bias"].DType(), math.NaN(), 1))
		}, nil, ErrNonFinite, []string{`tensor "2.bias": 1 of 1 values are NaN or ±Inf, the first NaN at index 0`}},
		{"parameter shape", func(f file, dt tensor.DType) { f.ts["0.weight"] = tensor.New(dt, 3, 4) },
			nil, ErrMismatch, []string{`tensor "0.weight" is (3, 4)`}},
		{"corrupt stream", func(f file, _ tensor.DType) { f.meta["rng.1.mask"] = "zz" },
			nil, ErrMismatch, []string{`random stream "1.mask" (metadata "rng.1.mask"): not a generator state`}},
		{"short stream", func(f file, _ tensor.DType) { f.meta["rng.1.mask"] = "706367" },
			nil, ErrMismatch, []string{`random stream "1.mask"`, "not a generator state"}},
		{"unexpected stream", func(f file, _ tensor.DType) { f.meta["rng.3.mask"] = f.meta["rng.1.mask"] },
			nil, ErrMismatch, []string{`unexpected random stream "3.mask"`}},
		{"metadata refused", func(file, tensor.DType) {}, func(meta map[string]string) error {
			if meta["epoch"] != "-5" {
				return fmt.Errorf("metadata %v", meta)
			}
			return errEpoch
		}, errEpoch, []string{"epoch -5"}},
	}
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				dir := t.TempDir()
				good := filepath.Join(dir, "good.safetensors")
				src := newRun(dt, 1, 3)
				require.NoError(t, Save(good, src.m, SaveOptions{Optimizer: src.opt, Metadata: map[string]string{"epoch": "-5"}}))
				ts, meta, err := ReadFile(good)
				require.NoError(t, err)
				c.edit(file{ts, meta}, dt)
				bad := filepath.Join(dir, "bad.safetensors")
				require.NoError(t, WriteFile(bad, ts, meta))

				dst := newRun(dt, 2, 1)
				before := dst.all()
				_, err = LoadInto(bad, dst.m, LoadOptions{Optimizer: dst.opt, CheckMetadata: c.check})
				require.Error(t, err)
				assert.ErrorIs(t, err, c.is)
				assert.Contains(t, err.Error(), bad)
				for _, w := range c.wants {
					assert.Contains(t, err.Error(), w)
				}
				assert.Equal(t, before, dst.all(), "nothing may change on a failed load")
			})
		}
	}
}

var errEpoch = errors.New("epoch -5 is negative")

// NaN and ±Inf are refused in every float dtype a file may hold, converted
// or not, with the tensor, the count and the first index named; with
// AllowNonFinite they load as they are.
func TestLoadIntoRefusesNonFinite(t *testing.T) {
	f16 := map[string]uint16{"NaN": 0x7E00, "+Inf": 0x7C00, "-Inf": 0xFC00}
	bf16 := map[string]uint16{"NaN": 0x7FC0, "+Inf": 0x7F80, "-Inf": 0xFF80}
	want := map[string]float64{"NaN": math.NaN(), "+Inf": math.Inf(1), "-Inf": math.Inf(-1)}
	for _, kind := range []string{"NaN", "+Inf", "-Inf"} {
		v := want[kind]
		files := []struct {
			dtype string
			data  []byte
		}{
			{"F16", cat(le16(0x3C00), le16(f16[kind]), le16(0x4000))},
			{"BF16", cat(le16(0x3F80), le16(bf16[kind]), le16(0x4000))},
			{"F32", cat(le32(math.Float32bits(1)), le32(math.Float32bits(float32(v))), le32(math.Float32bits(2)))},
			{"F64", cat(le64u(math.Float64bits(1)), le64u(math.Float64bits(v)), le64u(math.Float64bits(2)))},
		}
		for _, f := range files {
			for _, dt := range numtest.DTypes {
				t.Run(fmt.Sprintf("%s/%s/into %v", kind, f.dtype, dt), func(t *testing.T) {
					path := filepath.Join(t.TempDir(), "w.safetensors")
					js := `{"w":{"dtype":"` + f.dtype + `","shape":[3],"data_offsets":[0,` + itoa(len(f.data)) + `]}}`
					writeFileBytes(t, path, header(js, f.data))

					dst := dict{"w": tensor.FromValues(dt, []float64{7, 8, 9}, 3)}
					_, err := LoadInto(path, dst, LoadOptions{})
					require.ErrorIs(t, err, ErrNonFinite)
					assert.NotErrorIs(t, err, ErrMismatch)
					assert.Contains(t, err.Error(), path)
					assert.Contains(t, err.Error(), fmt.Sprintf(`tensor "w": 1 of 3 values are NaN or ±Inf, the first %s at index 1`, kind))
					assert.Contains(t, err.Error(), "AllowNonFinite")
					assert.Equal(t, []float64{7, 8, 9}, dst["w"].Values())

					_, err = LoadInto(path, dst, LoadOptions{AllowNonFinite: true})
					require.NoError(t, err)
					got := dst["w"].Values()
					assert.Equal(t, 1.0, got[0])
					assert.Equal(t, 2.0, got[2])
					if kind == "NaN" {
						assert.True(t, math.IsNaN(got[1]))
					} else {
						assert.Equal(t, v, got[1])
					}
				})
			}
		}
	}
}

func le16(v uint16) []byte  { return []byte{byte(v), byte(v >> 8)} }
func le32(v uint32) []byte  { return cat(le16(uint16(v)), le16(uint16(v>>16))) }
func le64u(v uint64) []byte { return cat(le32(uint32(v)), le32(uint32(v>>32))) }

func TestLoadIntoMismatchLeavesParamsUnchanged(t *testing.T) {
	for _, dt := range numtest.DTypes {
		cases := []struct {
			name  string
			edit  func(m dict) // applied to the saved model
			dst   func(m dict) // applied to the model loaded into
			wants []string
		}{
			{"shape", func(m dict) { m["fc.weight"] = tensor.New(dt, 3, 2) }, nil,
				[]string{`tensor "fc.weight" is (3, 2) ` + dt.String() + ` in the file but (2, 3) ` + dt.String() + ` in the model`}},
			{"missing", func(m dict) { delete(m, "scale") }, nil,
				[]string{`tensor "scale" () ` + dt.String() + ` is missing from the file`}},
			{"unexpected", func(m dict) { m["fc2.weight"] = tensor.New(dt, 4) }, nil,
				[]string{`unexpected tensor "fc2.weight" (4,)`}},
			{"several", func(m dict) {
				delete(m, "scale")
				m["fc.bias"] = tensor.New(dt, 3)
				m["extra"] = tensor.New(dt, 1)
			}, nil, []string{`"scale"`, `"fc.bias" is (3,)`, `unexpected tensor "extra"`}},
			{"tied weights differ", func(m dict) { m["tied"] = tensor.Full(dt, 9, 2, 3) },
				func(m dict) { m["tied"] = m["fc.weight"] },
				[]string{`tensors "fc.weight" and "tied" are one tensor in the model but differ in the file`}},
		}
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "m.safetensors")
				saved := model(dt, 0)
				c.edit(saved)
				require.NoError(t, Save(path, saved, SaveOptions{}))

				dst := model(dt, 100)
				if c.dst != nil {
					c.dst(dst)
				}
				before := snapshot(dst)
				meta, err := LoadInto(path, dst, LoadOptions{})
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrMismatch)
				assert.Nil(t, meta)
				assert.Contains(t, err.Error(), path)
				for _, w := range c.wants {
					assert.Contains(t, err.Error(), w)
				}
				assert.Equal(t, before, snapshot(dst), "no parameter may change on a failed load")
			})
		}
	}
}

// A non-contiguous destination is filled through its view.
func TestLoadIntoViewDestination(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	require.NoError(t, Save(path, model(tensor.Float64, 0), SaveOptions{}))
	dst := model(tensor.Float64, 100)
	dst["fc.weight"] = tensor.Transpose(tensor.New(tensor.Float64, 3, 2))
	_, err := LoadInto(path, dst, LoadOptions{})
	require.NoError(t, err)
	assert.Equal(t, snapshot(model(tensor.Float64, 0)), snapshot(dst))
}

// Two streams of one generator (two Dropouts built with one RNG) must have
// one state in the file.
func TestLoadIntoSharedStreamMustAgree(t *testing.T) {
	shared := tensor.NewRNG(4)
	m := nn.NewSequential(nn.NewDropout(shared, 0.5), nn.NewDropout(shared, 0.2))
	path := filepath.Join(t.TempDir(), "m.safetensors")
	require.NoError(t, Save(path, m, SaveOptions{}))
	ts, meta, err := ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, meta["rng.0.mask"], meta["rng.1.mask"])
	_, err = LoadInto(path, m, LoadOptions{})
	require.NoError(t, err)

	other, _ := tensor.NewRNG(5).MarshalBinary()
	meta["rng.1.mask"] = fmt.Sprintf("%x", other)
	require.NoError(t, WriteFile(path, ts, meta))
	before, _ := shared.MarshalBinary()
	_, err = LoadInto(path, m, LoadOptions{})
	require.ErrorIs(t, err, ErrMismatch)
	assert.Contains(t, err.Error(), `random streams "0.mask" and "1.mask" are one generator in the model but differ in the file`)
	after, _ := shared.MarshalBinary()
	assert.Equal(t, before, after)

	delete(meta, "rng.1.mask")
	require.NoError(t, WriteFile(path, ts, meta))
	_, err = LoadInto(path, nn.NewSequential(nn.NewDropout(shared, 0.5), nn.NewDropout(tensor.NewRNG(1), 0.2)), LoadOptions{})
	assert.ErrorContains(t, err, `random stream "1.mask" is missing from the file`)
}

func TestLoadIntoCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	require.NoError(t, Save(path, model(tensor.Float32, 0), SaveOptions{}))
	dst := model(tensor.Float32, 100)
	before := snapshot(dst)
	// Truncate the last data byte.
	data := readFileBytes(t, path)
	writeFileBytes(t, path, data[:len(data)-1])
	_, err := LoadInto(path, dst, LoadOptions{})
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), path)
	assert.Equal(t, before, snapshot(dst))
}

// Names that LoadInto would take for optimiser state or random streams
// are refused before anything is written.
func TestSaveReservedNames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.safetensors")
	err := Save(path, dict{"optim.lr": tensor.Scalar(tensor.Float32, 1)}, SaveOptions{})
	assert.ErrorContains(t, err, `state dict name "optim.lr"`)
	err = Save(path, model(tensor.Float32, 0), SaveOptions{Metadata: map[string]string{"rng.x": "1"}})
	assert.ErrorContains(t, err, `metadata key "rng.x"`)
	assertNoTempFiles(t, dir)
}

// An optimiser over other tensors than the model's parameters is misuse:
// a *tensor.Error naming the call.
func TestOptimizerOfAnotherModelPanics(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	a, b := newRun(tensor.Float32, 1, 0), newRun(tensor.Float32, 2, 0)
	require.NoError(t, Save(path, a.m, SaveOptions{Optimizer: a.opt}))
	for name, call := range map[string]func(){
		"checkpoint.Save":     func() { _ = Save(path, a.m, SaveOptions{Optimizer: b.opt}) },
		"checkpoint.LoadInto": func() { _, _ = LoadInto(path, a.m, LoadOptions{Optimizer: b.opt}) },
	} {
		var te *tensor.Error
		func() {
			defer func() { te, _ = recover().(*tensor.Error) }()
			call()
		}()
		require.NotNil(t, te, name)
		assert.Contains(t, te.Error(), name)
		assert.Contains(t, te.Error(), `not the model's "0.weight"`)
	}
}
