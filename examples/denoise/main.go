// Command denoise denoises binarised MNIST digits shipped with Gradus by
// mean-field variational inference in an Ising model (Bishop 2006,
// "Pattern Recognition and Machine Learning", §8.3.3; MacKay 2003,
// "Information Theory, Inference, and Learning Algorithms", ch. 33): each
// digit becomes a ±1 image, Gaussian noise is added, and CAVI sweeps
// restore it. It prints the pixel error rates before and after and writes
// a PNG with, per digit, the clean, noisy and denoised images (digits.png
// in -out).
//
//	go run ./examples/denoise [-n 8] [-sigma 1] [-w 0.8] [-sweeps 15] [-seed 1] [-out out/denoise] [-json] [-quiet]
package main

import (
	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/inference"
	"github.com/gradus-ml/gradus/tensor"
)

type result struct {
	NoisyErrorRate    float64   `json:"noisy_error_rate"`
	DenoisedErrorRate float64   `json:"denoised_error_rate"`
	FinalELBO         []float64 `json:"final_elbo"`
	Plot              string    `json:"plot,omitempty"`
}

func main() { cli.Main(program()) }

// config holds the flags.
type config struct {
	N      int     `flag:"n" help:"digits"`
	Sigma  float64 `flag:"sigma" help:"noise standard deviation (pixels are ±1)"`
	W      float64 `flag:"w" help:"Ising coupling"`
	Sweeps int     `flag:"sweeps" help:"CAVI sweeps"`
}

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "denoise"}, config{N: 8, Sigma: 1, W: 0.8, Sweeps: 15}, run)
}

func run(c config, env *cli.Env) (res result, err error) {
	n, sigma, w, sweeps := c.N, c.Sigma, c.W, c.Sweeps
	x, _, err := data.MNIST("test")
	if err != nil {
		return res, err
	}
	rng := tensor.NewRNG(env.Seed)
	var rows []float64 // clean, noisy and denoised digits, one triple per row of the picture
	wrongNoisy, wrongDenoised, total := 0, 0, 0
	for d := range n {
		img := tensor.Slice(x, 0, d, d+1, 1).Values()
		clean, noisy := make([]float64, 784), make([]float64, 784)
		for i, v := range img {
			clean[i] = -1
			if v > 0.5 {
				clean[i] = 1
			}
			noisy[i] = clean[i] + sigma*rng.NormFloat64()
		}
		r, err := inference.IsingDenoise(env.Context(), tensor.FromFloat64s(noisy, 28, 28), inference.IsingOptions{Coupling: w, Sigma: sigma, Sweeps: sweeps})
		if err != nil {
			return res, err
		}
		den := r.Mean.Values()
		for i := range clean {
			if (noisy[i] > 0) != (clean[i] > 0) {
				wrongNoisy++
			}
			if (den[i] > 0) != (clean[i] > 0) {
				wrongDenoised++
			}
		}
		total += 784
		res.FinalELBO = append(res.FinalELBO, r.ELBO[len(r.ELBO)-1])
		rows = append(append(append(rows, clean...), noisy...), den...)
		env.Printf("digit %d: ELBO %.1f → %.1f over %d sweeps\n", d, r.ELBO[0], r.ELBO[len(r.ELBO)-1], sweeps)
	}
	res.NoisyErrorRate = float64(wrongNoisy) / float64(total)
	res.DenoisedErrorRate = float64(wrongDenoised) / float64(total)
	env.Printf("pixel error rate: %.1f%% noisy → %.1f%% denoised (σ = %g, w = %g)\n",
		100*res.NoisyErrorRate, 100*res.DenoisedErrorRate, sigma, w)
	// Clean, noisy (clipped to [−1, 1]) and the posterior mean, grey from
	// −1 (black) to 1.
	res.Plot = env.Path("digits.png")
	if err := plot.ImageGrid(res.Plot, tensor.FromFloat64s(rows, 3*n, 28, 28), 3, 3, -1, 1); err != nil {
		return res, err
	}
	env.Println("picture:", res.Plot)
	return res, nil
}
