package nn

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// BatchNorm normalises each channel (axis 1) of its input over the batch
// and spatial axes (Ioffe and Szegedy 2015), as PyTorch's nn.BatchNorm1d
// and nn.BatchNorm2d: y = (x − mean)/√(var + Eps)·weight + bias.
//
// In training mode mean and var are the batch statistics (var biased) and
// the running estimates are updated in place:
// running ← (1 − Momentum)·running + Momentum·batch, with the unbiased batch
// variance for running_var. In evaluation mode the running estimates are
// used instead. The running statistics are buffers (Buffers), not
// parameters: checkpoints save them, optimisers do not touch them.
type BatchNorm struct {
	mode
	Weight *Param // (C), initialised to 1
	Bias   *Param // (C), initialised to 0

	// Buffers. They are Params so that a checkpoint loader can treat them
	// like parameters (replace or copy into Value); nothing trains them.
	RunningMean       *Param // (C), initialised to 0
	RunningVar        *Param // (C), initialised to 1
	NumBatchesTracked *Param // 0-d count of training steps, as PyTorch's buffer

	Features int     // number of channels (C) normalised
	Eps      float64 // added to the variance; 1e-5 by default
	Momentum float64 // weight of the new batch in the running estimates; 0.1 by default

	name string // "BatchNorm1D" or "BatchNorm2D"
	dims []int  // accepted input ranks
}

// NewBatchNorm1D returns a batch normalisation over inputs (N, C) or
// (N, C, L) with c channels in dtype dt, with PyTorch's defaults.
func NewBatchNorm1D(c int, dt tensor.DType) *BatchNorm {
	return newBatchNorm("BatchNorm1D", []int{2, 3}, c, dt)
}

// NewBatchNorm2D returns a batch normalisation over inputs (N, C, H, W)
// with c channels in dtype dt, with PyTorch's defaults.
func NewBatchNorm2D(c int, dt tensor.DType) *BatchNorm {
	return newBatchNorm("BatchNorm2D", []int{4}, c, dt)
}

func newBatchNorm(name string, dims []int, c int, dt tensor.DType) *BatchNorm {
	if c <= 0 {
		tensor.Fail("nn.New"+name, "number of channels must be positive, got %d", c)
	}
	return &BatchNorm{
		Weight:            NewParam(tensor.Ones(dt, c)),
		Bias:              NewParam(tensor.Zeros(dt, c)),
		RunningMean:       NewParam(tensor.Zeros(dt, c)),
		RunningVar:        NewParam(tensor.Ones(dt, c)),
		NumBatchesTracked: NewParam(tensor.Zeros(dt)),
		Features:          c,
		Eps:               1e-5,
		Momentum:          0.1,
		name:              name,
		dims:              dims,
	}
}

// String names the layer as its errors do, e.g. "BatchNorm2D(32)".
func (b *BatchNorm) String() string { return fmt.Sprintf("%s(%d)", b.name, b.Features) }

// Params returns "weight" and "bias".
func (b *BatchNorm) Params() []NamedParam {
	return []NamedParam{{"weight", b.Weight}, {"bias", b.Bias}}
}

// Buffers returns "running_mean", "running_var" and "num_batches_tracked",
// PyTorch's buffer names.
func (b *BatchNorm) Buffers() []NamedParam {
	return []NamedParam{
		{"running_mean", b.RunningMean},
		{"running_var", b.RunningVar},
		{"num_batches_tracked", b.NumBatchesTracked},
	}
}

// Forward normalises x. It panics, naming the layer and both shapes, if x
// has the wrong rank or channel count, and in training mode if there is
// only one value per channel (its variance is undefined).
func (b *BatchNorm) Forward(x *graph.Node) *graph.Node {
	checkInput(b, x, b.Weight.Value.DType())
	s := x.Shape()
	ok := false
	for _, d := range b.dims {
		ok = ok || len(s) == d
	}
	if !ok || s[1] != b.Features {
		want := fmt.Sprintf("(N, %d, H, W)", b.Features)
		if b.dims[0] == 2 {
			want = fmt.Sprintf("(N, %d) or (N, %d, L)", b.Features, b.Features)
		}
		tensor.Fail(b.String(), "input shape %s does not fit: want %s", tensor.FormatShape(s), want)
	}
	g := x.Graph()
	c := b.Features
	// y = x·s + (bias − mean·s) with s = weight/√(var + eps): the per-channel
	// work is done on (C) nodes, leaving one pass over x (ChannelAffine; in
	// training also ChannelMoments, whose gradient is one more pass).
	var mean, v *graph.Node
	if b.eval {
		mean = g.Const(b.RunningMean.Value)
		v = g.Const(b.RunningVar.Value)
	} else {
		n := x.Size() / c
		if n <= 1 {
			tensor.Fail(b.String(), "input shape %s has one value per channel; training needs more", tensor.FormatShape(s))
		}
		mean, v = graph.ChannelMoments(x) // biased variance, as the normalisation uses
		b.track(mean.Value(), v.Value(), n)
	}
	scale := graph.Div(b.Weight.Node(g), graph.Sqrt(graph.AddScalar(v, b.Eps)))
	return graph.ChannelAffine(x, scale, graph.Sub(b.Bias.Node(g), graph.Mul(mean, scale)))
}

// track folds one batch's mean and biased variance into the running
// estimates, in place so that references to the buffers stay valid.
func (b *BatchNorm) track(mean, biasedVar *tensor.Tensor, n int) {
	m := b.Momentum
	c := b.Features
	unbiased := tensor.MulScalar(tensor.Reshape(biasedVar, c), float64(n)/float64(n-1))
	rm, rv, nb := b.RunningMean.Value, b.RunningVar.Value, b.NumBatchesTracked.Value
	tensor.CopyInto(rm, tensor.Add(tensor.MulScalar(rm, 1-m), tensor.MulScalar(tensor.Reshape(mean, c), m)))
	tensor.CopyInto(rv, tensor.Add(tensor.MulScalar(rv, 1-m), tensor.MulScalar(unbiased, m)))
	tensor.CopyInto(nb, tensor.AddScalar(nb, 1))
}

// LayerNorm normalises over the trailing axes given by its normalised
// shape (Ba, Kiros and Hinton 2016), as PyTorch's nn.LayerNorm:
// y = (x − mean)/√(var + Eps)·weight + bias with the biased variance,
// computed the same way in both modes.
type LayerNorm struct {
	Weight *Param  // normalised shape, initialised to 1; nil without affine
	Bias   *Param  // normalised shape, initialised to 0; nil without affine
	Shape  []int   // the trailing shape normalised over
	Eps    float64 // added to the variance
}

// NewLayerNorm returns a layer normalisation over inputs ending in shape,
// with eps added to the variance (PyTorch uses 1e-5) and, if affine, a
// learned elementwise weight and bias.
func NewLayerNorm(shape []int, eps float64, affine bool, dt tensor.DType) *LayerNorm {
	if len(shape) == 0 {
		tensor.Fail("nn.NewLayerNorm", "empty normalised shape")
	}
	for _, d := range shape {
		if d <= 0 {
			tensor.Fail("nn.NewLayerNorm", "normalised shape %s has a non-positive dimension", tensor.FormatShape(shape))
		}
	}
	l := &LayerNorm{Shape: append([]int(nil), shape...), Eps: eps}
	if affine {
		l.Weight = NewParam(tensor.Ones(dt, shape...))
		l.Bias = NewParam(tensor.Zeros(dt, shape...))
	}
	return l
}

// String names the layer as its errors do, e.g. "LayerNorm((64,))".
func (l *LayerNorm) String() string { return fmt.Sprintf("LayerNorm(%s)", tensor.FormatShape(l.Shape)) }

// Params returns "weight" and "bias", or nil without affine.
func (l *LayerNorm) Params() []NamedParam {
	if l.Weight == nil {
		return nil
	}
	return []NamedParam{{"weight", l.Weight}, {"bias", l.Bias}}
}

// SetTraining does nothing: layer normalisation is the same in both modes.
func (l *LayerNorm) SetTraining(bool) {}

// Forward normalises x (..., Shape...). It panics, naming the layer and
// both shapes, if x does not end in Shape.
func (l *LayerNorm) Forward(x *graph.Node) *graph.Node {
	if x == nil {
		tensor.Fail(l.String(), "nil input")
	}
	if l.Weight != nil {
		checkInput(l, x, l.Weight.Value.DType())
	}
	s := x.Shape()
	k := len(l.Shape)
	fits := len(s) >= k
	for i := 0; fits && i < k; i++ {
		fits = s[len(s)-k+i] == l.Shape[i]
	}
	if !fits {
		tensor.Fail(l.String(), "input shape %s does not fit: want (..., %s)", tensor.FormatShape(s), joinDims(l.Shape))
	}
	d := 1
	for _, n := range l.Shape {
		d *= n
	}
	y := standardizeRows(x, d, l.Eps)
	if l.Weight != nil {
		g := x.Graph()
		y = graph.Add(graph.Mul(y, l.Weight.Node(g)), l.Bias.Node(g))
	}
	return y
}

// standardizeRows returns (x − mean)/√(var + eps) with the mean and biased
// variance of every run of d consecutive elements of x (its last axes): the
// runs are the channels of a (1, rows, d) view, so the statistics are one
// ChannelMoments and the map one ChannelAffine (scale 1/σ, shift −mean/σ,
// the form PyTorch's CPU kernels use too) instead of two reductions and two
// broadcasting passes, each with its own backward.
func standardizeRows(x *graph.Node, d int, eps float64) *graph.Node {
	if x.Size() == 0 {
		return graph.MulScalar(x, 1) // nothing to normalise
	}
	s := x.Shape()
	rows := graph.Reshape(x, 1, x.Size()/d, d)
	mean, v := graph.ChannelMoments(rows)
	rstd := graph.Reciprocal(graph.Sqrt(graph.AddScalar(v, eps)))
	return graph.Reshape(graph.ChannelAffine(rows, rstd, graph.Neg(graph.Mul(mean, rstd))), s...)
}

// joinDims formats dims without parentheses: "3, 4".
func joinDims(dims []int) string {
	s := tensor.FormatShape(dims)
	s = s[1 : len(s)-1]
	if len(dims) == 1 {
		s = s[:len(s)-1]
	}
	return s
}
