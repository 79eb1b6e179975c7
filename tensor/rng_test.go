package tensor

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var cvDTypes = []DType{Float32, Float64}

// draws returns a few values of every kind an RNG produces, so determinism
// tests cover all methods.
func rngDraws(g *RNG, dt DType) []float64 {
	var out []float64
	out = append(out, g.Uniform(dt, -2, 3, 4, 5).Values()...)
	out = append(out, g.Normal(dt, 1, 2, 7).Values()...)
	out = append(out, g.Bernoulli(dt, 0.4, 9).Values()...)
	for _, p := range g.Perm(6) {
		out = append(out, float64(p))
	}
	out = append(out, g.Float64(), g.NormFloat64(), float64(g.Intn(1000)), float64(g.Uint64()>>11))
	return out
}

func TestRNGDeterminism(t *testing.T) {
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			a, b := NewRNG(42), NewRNG(42)
			// Interleave the two so hidden shared state would show up.
			for range 3 {
				da := rngDraws(a, dt)
				db := rngDraws(b, dt)
				require.Equal(t, da, db)
			}
			c := rngDraws(NewRNG(43), dt)
			assert.NotEqual(t, rngDraws(NewRNG(42), dt), c)
		})
	}
}

func TestRNGMatchesStdlibPCG(t *testing.T) {
	// The documented construction: PCG seeded with (seed, pcgStream).
	ref := rand.New(rand.NewPCG(7, pcgStream))
	g := NewRNG(7)
	for range 100 {
		require.Equal(t, ref.Uint64(), g.Uint64())
	}
	require.Equal(t, ref.Float64(), g.Float64())
	require.Equal(t, ref.NormFloat64(), g.NormFloat64())
}

func TestRNGNormalMoments(t *testing.T) {
	const n = 100000
	cases := []struct{ mean, std float64 }{{0, 1}, {3, 0.5}, {-2, 4}}
	for _, dt := range cvDTypes {
		for _, c := range cases {
			x := NewRNG(1).Normal(dt, c.mean, c.std, n)
			require.Equal(t, []int{n}, x.Shape())
			v := x.Values()
			m, s2 := rngMeanVar(v)
			// Standard errors of the sample mean and variance of a normal.
			seMean := c.std / math.Sqrt(n)
			seVar := c.std * c.std * math.Sqrt(2.0/(n-1))
			assert.InDelta(t, c.mean, m, 4*seMean, "%v mean", dt)
			assert.InDelta(t, c.std*c.std, s2, 4*seVar, "%v variance", dt)
		}
	}
}

func TestRNGUniform(t *testing.T) {
	const n = 100000
	for _, dt := range cvDTypes {
		lo, hi := -1.5, 2.5
		v := NewRNG(2).Uniform(dt, lo, hi, 100, 1000).Values()
		for _, x := range v {
			require.True(t, x >= lo && x < hi, "%v: %g outside [%g, %g)", dt, x, lo, hi)
		}
		m, s2 := rngMeanVar(v)
		w := hi - lo
		assert.InDelta(t, (lo+hi)/2, m, 4*w/math.Sqrt(12*n), dt.String())
		// Var of U(0, w) is w²/12; the variance of the sample variance is
		// (μ4 − σ⁴)/n with μ4 = w⁴/80.
		seVar := math.Sqrt((math.Pow(w, 4)/80 - math.Pow(w*w/12, 2)) / n)
		assert.InDelta(t, w*w/12, s2, 4*seVar, dt.String())
	}
}

func TestRNGBernoulli(t *testing.T) {
	const n = 100000
	for _, dt := range cvDTypes {
		for _, p := range []float64{0.3, 0, 1} {
			v := NewRNG(3).Bernoulli(dt, p, n).Values()
			ones := 0
			for _, x := range v {
				require.True(t, x == 0 || x == 1, "%v: value %g", dt, x)
				if x == 1 {
					ones++
				}
			}
			se := math.Sqrt(p * (1 - p) / n)
			assert.InDelta(t, p, float64(ones)/n, 4*se+1e-12, "%v p=%g", dt, p)
		}
	}
}

func TestRNGPermAndIntn(t *testing.T) {
	g := NewRNG(4)
	p := g.Perm(50)
	s := append([]int{}, p...)
	sort.Ints(s)
	for i, v := range s {
		require.Equal(t, i, v)
	}
	assert.Empty(t, g.Perm(0))
	counts := make([]int, 5)
	for range 50000 {
		counts[g.Intn(5)]++
	}
	for _, c := range counts {
		// Each bucket ~ Binomial(50000, 0.2): sd ≈ 89.
		assert.InDelta(t, 10000, c, 4*math.Sqrt(50000*0.2*0.8))
	}
}

func TestRNGMisuse(t *testing.T) {
	g := NewRNG(5)
	cases := []struct {
		name string
		f    func()
		msg  string
	}{
		{"Intn", func() { g.Intn(0) }, "Intn"},
		{"Perm", func() { g.Perm(-1) }, "Perm"},
		{"Uniform", func() { g.Uniform(Float32, 1, 1, 2) }, "Uniform"},
		{"Normal", func() { g.Normal(Float64, 0, -1, 2) }, "Normal"},
		{"Bernoulli", func() { g.Bernoulli(Float32, 1.5, 2) }, "Bernoulli"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := cvCatch(c.f)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "tensor."+c.msg)
		})
	}
}

func rngMeanVar(v []float64) (mean, variance float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	variance /= float64(len(v) - 1)
	return mean, variance
}

// cvCatch runs f and returns the *Error it panicked with, if any.
func cvCatch(f func()) (err error) {
	defer Recover(&err)
	f()
	return nil
}

// A generator restored from a saved state draws what the original draws
// after the save, for every kind of draw; a malformed state is refused and
// changes nothing.
func TestRNGStateRoundTrip(t *testing.T) {
	for _, dt := range cvDTypes {
		g := NewRNG(3)
		rngDraws(g, dt) // advance past the seed
		state, err := g.MarshalBinary()
		require.NoError(t, err)
		want := rngDraws(g, dt)

		h := NewRNG(99)
		require.NoError(t, h.UnmarshalBinary(state))
		assert.Equal(t, want, rngDraws(h, dt), "%v", dt)

		before, _ := h.MarshalBinary()
		for _, bad := range [][]byte{nil, state[:len(state)-1], append([]byte("xyz:"), state[4:]...)} {
			require.Error(t, h.UnmarshalBinary(bad), "%q", bad)
			after, _ := h.MarshalBinary()
			assert.Equal(t, before, after)
		}
	}
}
