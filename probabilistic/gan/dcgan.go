package gan

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// Options describes a DCGAN pair (NewGenerator, NewDiscriminator) for
// Size×Size images with Channels channels (1 for MNIST). Size must be a
// multiple of 4; the networks work at Size/4 and Size/2 internally.
type Options struct {
	Size     int // image height and width (28 for MNIST)
	Channels int // image channels
	Latent   int // length of the generator's noise vector z
	Width    int // feature maps of the generator's last and the discriminator's first hidden layer; the middle layers have 2·Width
	// BatchNorm adds batch normalisation to the discriminator's middle
	// layer (DCGAN). Leave it off for a WGAN-GP critic: the gradient
	// penalty needs each sample's score to depend on that sample alone.
	BatchNorm bool
	// DefaultInit keeps the layers' own initialisation (PyTorch's
	// defaults) instead of DCGAN's N(0, 0.02²) weights. A WGAN-GP critic
	// trains faster with it: with DCGAN's small weights its input gradient
	// is near 0, so the penalty starts at λ and the critic's first epochs
	// go into growing it to norm 1.
	DefaultInit bool
}

func (c Options) check(op string) {
	if c.Size < 4 || c.Size%4 != 0 || c.Channels < 1 || c.Latent < 1 || c.Width < 1 {
		tensor.Fail(op, "invalid configuration %+v: Size must be a positive multiple of 4, Channels, Latent and Width positive", c)
	}
}

// Generator is the DCGAN generator: z (N, Latent) is read as a 1×1 image
// and upsampled by transposed convolutions with batch normalisation and
// ReLU between them,
//
//	ConvTranspose(Latent→2W, Size/4×Size/4) → BatchNorm → ReLU        (Size/4)
//	ConvTranspose(2W→W, 4×4, stride 2, padding 1) → BatchNorm → ReLU  (Size/2)
//	ConvTranspose(W→Channels, 4×4, stride 2, padding 1) → Tanh        (Size)
//
// so its images lie in (−1, 1). Parameters are named as the layers of the
// embedded Sequential ("0.weight", "1.weight", …); the transposed
// convolutions before batch normalisation have no bias.
type Generator struct {
	*nn.Sequential
	Options Options
}

// NewGenerator returns a generator initialised as in the DCGAN paper
// (unless cfg.DefaultInit): convolution weights from N(0, 0.02²),
// batch-norm scales from N(1, 0.02²), biases 0. It panics with a *tensor.Error on an invalid cfg.
func NewGenerator(rng *tensor.RNG, cfg Options, dt tensor.DType) *Generator {
	cfg.check("gan.NewGenerator")
	w, b := cfg.Width, cfg.Size/4
	up := nn.Conv2DOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, NoBias: true, DType: dt}
	s := nn.NewSequential(
		nn.NewConvTranspose2D(rng, cfg.Latent, 2*w, [2]int{b, b}, nn.Conv2DOptions{NoBias: true, DType: dt}),
		nn.NewBatchNorm2D(2*w, dt), nn.ReLU{},
		nn.NewConvTranspose2D(rng, 2*w, w, [2]int{4, 4}, up),
		nn.NewBatchNorm2D(w, dt), nn.ReLU{},
		nn.NewConvTranspose2D(rng, w, cfg.Channels, [2]int{4, 4}, nn.Conv2DOptions{Stride: up.Stride, Padding: up.Padding, DType: dt}),
		nn.Tanh{},
	)
	if !cfg.DefaultInit {
		dcganInit(rng, s)
	}
	return &Generator{Sequential: s, Options: cfg}
}

// Forward maps z (N, Latent) to images (N, Channels, Size, Size).
func (g *Generator) Forward(z *graph.Node) *graph.Node {
	if z == nil || z.Dim() != 2 || z.Shape()[1] != g.Options.Latent {
		var got []int
		if z != nil {
			got = z.Shape()
		}
		tensor.Fail("gan.Generator", "noise of shape %s, want (N, %d)", tensor.FormatShape(got), g.Options.Latent)
	}
	return g.Sequential.Forward(graph.Reshape(z, z.Shape()[0], g.Options.Latent, 1, 1))
}

// Discriminator is the DCGAN discriminator, or with Options.BatchNorm off a
// WGAN-GP critic: strided convolutions with leaky ReLUs (slope 0.2) down
// to one score per image,
//
//	Conv(Channels→W, 4×4, stride 2, padding 1) → LeakyReLU              (Size/2)
//	Conv(W→2W, 4×4, stride 2, padding 1) [→ BatchNorm] → LeakyReLU     (Size/4)
//	Conv(2W→1, Size/4×Size/4) → Flatten                                 (N, 1)
//
// Its output is a logit for the standard GAN and an unbounded score for
// the Wasserstein critic.
type Discriminator struct {
	*nn.Sequential
	Options Options
}

// NewDiscriminator returns a discriminator initialised as NewGenerator
// initialises the generator. It panics with a *tensor.Error on an invalid
// cfg.
func NewDiscriminator(rng *tensor.RNG, cfg Options, dt tensor.DType) *Discriminator {
	cfg.check("gan.NewDiscriminator")
	w, b := cfg.Width, cfg.Size/4
	down := nn.Conv2DOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, DType: dt}
	mid := down
	mid.NoBias = cfg.BatchNorm
	s := nn.NewSequential(
		nn.NewConv2D(rng, cfg.Channels, w, [2]int{4, 4}, down), nn.NewLeakyReLU(0.2),
		nn.NewConv2D(rng, w, 2*w, [2]int{4, 4}, mid),
	)
	if cfg.BatchNorm {
		s.Add("", nn.NewBatchNorm2D(2*w, dt))
	}
	s.Add("", nn.NewLeakyReLU(0.2))
	s.Add("", nn.NewConv2D(rng, 2*w, 1, [2]int{b, b}, nn.Conv2DOptions{DType: dt}))
	s.Add("", nn.NewFlatten())
	if !cfg.DefaultInit {
		dcganInit(rng, s)
	}
	return &Discriminator{Sequential: s, Options: cfg}
}

// Forward maps images (N, Channels, Size, Size) to scores (N, 1).
func (d *Discriminator) Forward(x *graph.Node) *graph.Node {
	c := d.Options
	if x == nil || x.Dim() != 4 || x.Shape()[1] != c.Channels || x.Shape()[2] != c.Size || x.Shape()[3] != c.Size {
		var got []int
		if x != nil {
			got = x.Shape()
		}
		tensor.Fail("gan.Discriminator", "images of shape %s, want (N, %d, %d, %d)", tensor.FormatShape(got), c.Channels, c.Size, c.Size)
	}
	return d.Sequential.Forward(x)
}

// dcganInit draws convolution weights from N(0, 0.02²) and batch-norm
// scales from N(1, 0.02²), and zeroes the biases (Radford et al. 2016, §4).
func dcganInit(rng *tensor.RNG, s *nn.Sequential) {
	for i := range s.Len() {
		switch l := s.Layer(i).(type) {
		case *nn.Conv2D:
			nn.Normal(rng, l.Weight.Value, 0, 0.02)
			if l.Bias != nil {
				nn.Zeros(l.Bias.Value)
			}
		case *nn.ConvTranspose2D:
			nn.Normal(rng, l.Weight.Value, 0, 0.02)
			if l.Bias != nil {
				nn.Zeros(l.Bias.Value)
			}
		case *nn.BatchNorm:
			nn.Normal(rng, l.Weight.Value, 1, 0.02)
			nn.Zeros(l.Bias.Value)
		}
	}
}
