package main

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// Rematerialisation: a 32-layer ReLU MLP of width 256 on batches of 256
// in float32, forward, loss Σ out²/2 and the gradients of every
// parameter (no optimiser step), as 8 segments of 4 layers.
// remat_mlp32_plain keeps every layer's values; remat_mlp32 wraps each
// segment in nn.Remat, so the reverse sweep recomputes a segment's values
// when it reaches it. Both report the step's buffer memory at its peak
// (graph.Graph.BufferBytes at the end of the step: what the graph handed
// out, plus the most its scratch graph held), and remat_mlp32 its memory
// and time as ratios to the plain step measured in the same run (`-only
// remat_mlp32`; the issue's target is half the memory for at most 1.4×
// the time).

const rematLayers, rematPer, rematWidth, rematBatch = 32, 4, 256, 256

// rematRef holds the plain step's latest seconds and bytes.
type rematRef struct {
	sec   float64
	bytes int64
}

func rematWorkloads() []workload {
	var ref rematRef
	var plainBytes, rematBytes int64
	ms := func(name string, sec float64) Result { return Result{name, "ms_per_step", sec * 1e3, "ms"} }
	mb := func(name string, b int64) Result {
		return Result{name, "peak_buffer_mb", float64(b) / (1 << 20), "MiB"}
	}
	return []workload{
		seeded("remat_mlp32_plain", 3, func(name string, sec float64) []Result {
			ref = rematRef{sec, plainBytes}
			return []Result{ms(name, sec), mb(name, plainBytes)}
		}, func(rng *tensor.RNG) step { return rematStep(rng, false, &plainBytes) }),
		seeded("remat_mlp32", 3, func(name string, sec float64) []Result {
			rs := []Result{ms(name, sec), mb(name, rematBytes)}
			if ref.sec > 0 {
				rs = append(rs, Result{name, "time_ratio_to_plain", sec / ref.sec, "x"},
					Result{name, "memory_ratio_to_plain", float64(rematBytes) / float64(ref.bytes), "x"})
			}
			return rs
		}, func(rng *tensor.RNG) step { return rematStep(rng, true, &rematBytes) }),
	}
}

// rematStep builds the MLP (segments wrapped in nn.Remat when remat is
// set) and returns its training step, which records the step's buffer
// bytes in bytes.
func rematStep(rng *tensor.RNG, remat bool, bytes *int64) step {
	var segs []nn.Layer
	for range rematLayers / rematPer {
		var seg []nn.Layer
		for range rematPer {
			seg = append(seg, nn.NewLinear(rng, rematWidth, rematWidth, true, tensor.Float32), nn.ReLU{})
		}
		var l nn.Layer = nn.NewSequential(seg...)
		if remat {
			l = nn.NewRemat(l)
		}
		segs = append(segs, l)
	}
	m := nn.NewSequential(segs...)
	ps := m.Params()
	x := rng.Normal(tensor.Float32, 0, 1, rematBatch, rematWidth)
	g := graph.New()
	return func() {
		g.Reset()
		out := m.Forward(g.Const(x))
		loss := graph.MulScalar(graph.Sum(graph.Square(out), nil, false), 0.5)
		nn.Gradients(loss, ps)
		*bytes = g.BufferBytes()
	}
}
