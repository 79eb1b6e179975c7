package diffusion

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// UNetOptions sizes a UNet (NewUNet). Zero fields take the defaults in
// brackets.
type UNetOptions struct {
	Channels int // image channels in and out [1]
	Base     int // channels at full resolution; twice as many at ½ and ¼ [16]
	Groups   int // GroupNorm groups; must divide Base [8]
	Heads    int // attention heads at ¼ resolution; must divide 2·Base [4]
	MaxT     int // the largest time step the embedding table holds [1000]
}

// UNet is a small noise-prediction U-Net in the manner of Ho et al. (2020)
// for images whose sides are multiples of 4 (28×28 MNIST digits): residual
// blocks (GroupNorm, SiLU, 3×3 convolutions, the time embedding added
// between them) at full resolution with Base channels, at ½ and at ¼ with
// 2·Base; stride-2 convolutions down, 4×4 stride-2 transposed convolutions
// up with skip connections concatenated; multi-head self-attention over
// the ¼-resolution positions between two residual blocks. The time step
// enters through the sinusoidal position encoding of t (nn.
// SinusoidalPositions, 4·Base wide) and a two-layer SiLU MLP. The output convolution
// starts at zero, so an untrained model predicts ε̂ = 0.
type UNet struct {
	Options  UNetOptions    // the sizes, defaults filled in
	table    *tensor.Tensor // (MaxT+1, 4·Base) sinusoidal encodings of t
	Time1    *nn.Linear     // 4·Base → 4·Base
	Time2    *nn.Linear     // 4·Base → 4·Base
	In       *nn.Conv2D
	Down1    *ResBlock
	Pool1    *nn.Conv2D
	Down2    *ResBlock
	Pool2    *nn.Conv2D
	Mid1     *ResBlock
	Attn     *AttentionBlock
	Mid2     *ResBlock
	Up2      *nn.ConvTranspose2D
	UpBlock2 *ResBlock
	Up1      *nn.ConvTranspose2D
	UpBlock1 *ResBlock
	OutNorm  *nn.GroupNorm
	Out      *nn.Conv2D
}

// NewUNet returns a UNet initialised from rng. It panics with a
// *tensor.Error if the configuration does not fit (groups or heads that
// do not divide the channels, a size that is not positive).
func NewUNet(rng *tensor.RNG, cfg UNetOptions, dt tensor.DType) *UNet {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&cfg.Channels, 1)
	def(&cfg.Base, 16)
	def(&cfg.Groups, 8)
	def(&cfg.Heads, 4)
	def(&cfg.MaxT, 1000)
	b := cfg.Base
	if cfg.Channels < 0 || b <= 0 || cfg.Groups <= 0 || b%cfg.Groups != 0 || cfg.Heads <= 0 || 2*b%cfg.Heads != 0 || cfg.MaxT < 0 {
		tensor.Fail("diffusion.NewUNet", "invalid configuration %+v: groups must divide Base, heads 2·Base", cfg)
	}
	same := nn.Conv2DOptions{Padding: [2]int{1, 1}, DType: dt}
	half := nn.Conv2DOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, DType: dt}
	temb := 4 * b
	rb := ResBlockOptions{TimeDim: temb, Groups: cfg.Groups}
	u := &UNet{
		Options:  cfg,
		table:    nn.SinusoidalPositions(dt, cfg.MaxT+1, temb),
		Time1:    nn.NewLinear(rng, temb, temb, true, dt),
		Time2:    nn.NewLinear(rng, temb, temb, true, dt),
		In:       nn.NewConv2D(rng, cfg.Channels, b, [2]int{3, 3}, same),
		Down1:    NewResBlock(rng, b, b, rb, dt),
		Pool1:    nn.NewConv2D(rng, b, 2*b, [2]int{3, 3}, half),
		Down2:    NewResBlock(rng, 2*b, 2*b, rb, dt),
		Pool2:    nn.NewConv2D(rng, 2*b, 2*b, [2]int{3, 3}, half),
		Mid1:     NewResBlock(rng, 2*b, 2*b, rb, dt),
		Attn:     NewAttentionBlock(rng, 2*b, cfg.Groups, cfg.Heads, dt),
		Mid2:     NewResBlock(rng, 2*b, 2*b, rb, dt),
		Up2:      nn.NewConvTranspose2D(rng, 2*b, 2*b, [2]int{4, 4}, half),
		UpBlock2: NewResBlock(rng, 4*b, 2*b, rb, dt),
		Up1:      nn.NewConvTranspose2D(rng, 2*b, b, [2]int{4, 4}, half),
		UpBlock1: NewResBlock(rng, 2*b, b, rb, dt),
		OutNorm:  nn.NewGroupNorm(cfg.Groups, b, 1e-5, true, dt),
		Out:      nn.NewConv2D(rng, b, cfg.Channels, [2]int{3, 3}, same),
	}
	u.Out.Weight.Value.Fill(0)
	u.Out.Bias.Value.Fill(0)
	return u
}

// String names the model in errors.
func (u *UNet) String() string {
	return fmt.Sprintf("diffusion.UNet(channels %d, base %d)", u.Options.Channels, u.Options.Base)
}

// Params returns the parameters under stable names ("down1.conv1.weight",
// "attn.attn.in_proj_weight", …).
func (u *UNet) Params() []nn.NamedParam {
	var ps []nn.NamedParam
	add := func(name string, m nn.Module) { ps = append(ps, nn.Prefix(name, m.Params())...) }
	add("time1", u.Time1)
	add("time2", u.Time2)
	add("in", u.In)
	add("down1", u.Down1)
	add("pool1", u.Pool1)
	add("down2", u.Down2)
	add("pool2", u.Pool2)
	add("mid1", u.Mid1)
	add("attn", u.Attn)
	add("mid2", u.Mid2)
	add("up2", u.Up2)
	add("upblock2", u.UpBlock2)
	add("up1", u.Up1)
	add("upblock1", u.UpBlock1)
	add("outnorm", u.OutNorm)
	add("out", u.Out)
	return ps
}

// SetTraining does nothing: the model has no dropout or batch statistics.
func (u *UNet) SetTraining(bool) {}

// Forward predicts the noise in x (N, Channels, H, W), H and W multiples
// of 4, at the time steps t (one per row, in 0…MaxT). It is a NoiseModel.
// It panics with a *tensor.Error naming the model on a shape, dtype or
// time step that does not fit.
func (u *UNet) Forward(x *graph.Node, t []int) *graph.Node {
	if x == nil {
		tensor.Fail(u.String(), "nil input")
	}
	s := x.Shape()
	if len(s) != 4 || s[1] != u.Options.Channels || s[2]%4 != 0 || s[3]%4 != 0 || s[2] == 0 || s[3] == 0 {
		tensor.Fail(u.String(), "input shape %s does not fit: want (N, %d, H, W) with H and W positive multiples of 4",
			tensor.FormatShape(s), u.Options.Channels)
	}
	if len(t) != s[0] {
		tensor.Fail(u.String(), "%d time steps for a batch of %d", len(t), s[0])
	}
	for _, v := range t {
		if v < 0 || v > u.Options.MaxT {
			tensor.Fail(u.String(), "time step %d outside 0…%d", v, u.Options.MaxT)
		}
	}
	g := x.Graph()
	silu := nn.SiLU{}
	emb := g.Const(tensor.IndexSelect(u.table, 0, t))
	emb = u.Time2.Forward(silu.Forward(u.Time1.Forward(emb)))
	h := u.In.Forward(x)
	h1 := u.Down1.Forward(h, emb)
	h2 := u.Down2.Forward(u.Pool1.Forward(h1), emb)
	h = u.Mid1.Forward(u.Pool2.Forward(h2), emb)
	h = u.Mid2.Forward(u.Attn.Forward(h), emb)
	h = u.UpBlock2.Forward(graph.Concat(1, u.Up2.Forward(h), h2), emb)
	h = u.UpBlock1.Forward(graph.Concat(1, u.Up1.Forward(h), h1), emb)
	return u.Out.Forward(silu.Forward(u.OutNorm.Forward(h)))
}

// ResBlock is the residual block of a DDPM U-Net: h = Conv1(SiLU(Norm1(x)))
// + Time(SiLU(emb)) per channel; out = Skip(x) + Conv2(SiLU(Norm2(h))),
// where Skip is a 1×1 convolution when the channels change and the identity
// otherwise.
type ResBlock struct {
	Norm1, Norm2 *nn.GroupNorm
	Conv1, Conv2 *nn.Conv2D
	Time         *nn.Linear
	Skip         *nn.Conv2D // nil when in = out
}

// ResBlockOptions sizes a ResBlock's time embedding and normalisation
// (NewResBlock).
type ResBlockOptions struct {
	TimeDim int // width of the time embedding the block takes (required)
	Groups  int // GroupNorm groups; must divide in and out; 0 means 8
}

// NewResBlock returns a block from in to out channels taking a time
// embedding of width opts.TimeDim, with GroupNorm in opts.Groups groups.
// It panics with a *tensor.Error if a size is not positive.
func NewResBlock(rng *tensor.RNG, in, out int, opts ResBlockOptions, dt tensor.DType) *ResBlock {
	temb, groups := opts.TimeDim, opts.Groups
	if groups == 0 {
		groups = 8
	}
	if in < 1 || out < 1 || temb < 1 || groups < 1 {
		tensor.Fail("diffusion.NewResBlock", "in = %d, out = %d, TimeDim = %d and Groups = %d must be positive", in, out, temb, groups)
	}
	same := nn.Conv2DOptions{Padding: [2]int{1, 1}, DType: dt}
	r := &ResBlock{
		Norm1: nn.NewGroupNorm(groups, in, 1e-5, true, dt),
		Conv1: nn.NewConv2D(rng, in, out, [2]int{3, 3}, same),
		Time:  nn.NewLinear(rng, temb, out, true, dt),
		Norm2: nn.NewGroupNorm(groups, out, 1e-5, true, dt),
		Conv2: nn.NewConv2D(rng, out, out, [2]int{3, 3}, same),
	}
	if in != out {
		r.Skip = nn.NewConv2D(rng, in, out, [2]int{1, 1}, nn.Conv2DOptions{DType: dt})
	}
	return r
}

// Params returns the parameters under stable names.
func (r *ResBlock) Params() []nn.NamedParam {
	var ps []nn.NamedParam
	ps = append(ps, nn.Prefix("norm1", r.Norm1.Params())...)
	ps = append(ps, nn.Prefix("conv1", r.Conv1.Params())...)
	ps = append(ps, nn.Prefix("time", r.Time.Params())...)
	ps = append(ps, nn.Prefix("norm2", r.Norm2.Params())...)
	ps = append(ps, nn.Prefix("conv2", r.Conv2.Params())...)
	if r.Skip != nil {
		ps = append(ps, nn.Prefix("skip", r.Skip.Params())...)
	}
	return ps
}

// SetTraining does nothing.
func (r *ResBlock) SetTraining(bool) {}

// Forward maps x (N, in, H, W) and the time embedding emb (N, temb) to
// (N, out, H, W).
func (r *ResBlock) Forward(x, emb *graph.Node) *graph.Node {
	silu := nn.SiLU{}
	h := r.Conv1.Forward(silu.Forward(r.Norm1.Forward(x)))
	te := r.Time.Forward(silu.Forward(emb))
	h = graph.Add(h, graph.Reshape(te, te.Shape()[0], te.Shape()[1], 1, 1))
	h = r.Conv2.Forward(silu.Forward(r.Norm2.Forward(h)))
	if r.Skip != nil {
		x = r.Skip.Forward(x)
	}
	return graph.Add(x, h)
}

// AttentionBlock is self-attention over the positions of a feature map:
// x + Attn(Norm(x)), the H·W positions of (N, C, H, W) forming a sequence
// of C-wide tokens for nn.MultiheadAttention.
type AttentionBlock struct {
	Norm *nn.GroupNorm
	Attn *nn.MultiheadAttention
}

// NewAttentionBlock returns the block over c channels with GroupNorm in
// groups groups and heads attention heads.
func NewAttentionBlock(rng *tensor.RNG, c, groups, heads int, dt tensor.DType) *AttentionBlock {
	return &AttentionBlock{Norm: nn.NewGroupNorm(groups, c, 1e-5, true, dt), Attn: nn.NewMultiheadAttention(rng, c, heads, dt)}
}

// Params returns the parameters under stable names.
func (a *AttentionBlock) Params() []nn.NamedParam {
	return append(nn.Prefix("norm", a.Norm.Params()), nn.Prefix("attn", a.Attn.Params())...)
}

// SetTraining does nothing.
func (a *AttentionBlock) SetTraining(bool) {}

// Forward maps x (N, C, H, W) to the same shape.
func (a *AttentionBlock) Forward(x *graph.Node) *graph.Node {
	s := x.Shape()
	h := a.Norm.Forward(x)
	seq := graph.Permute(graph.Reshape(h, s[0], s[1], s[2]*s[3]), 0, 2, 1) // (N, HW, C)
	y := a.Attn.Forward(seq, seq, seq, nil, false)
	return graph.Add(x, graph.Reshape(graph.Permute(y, 0, 2, 1), s...))
}
