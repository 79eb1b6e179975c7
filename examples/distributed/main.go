// Command distributed trains a 784-256-10 MLP on the embedded MNIST digits
// data-parallel over MPI ranks, or measures the all-reduce's bandwidth.
//
//	go build -tags mpi -o /tmp/dp ./examples/distributed
//	mpirun -np 2 /tmp/dp -steps 200              # train on two ranks
//	mpirun -np 2 /tmp/dp -mode allreduce         # all-reduce bandwidth
//
// Built without the tag it runs as one rank. Each rank takes an equal share
// of every global batch (data.Sharded) and trains through train.Trainer,
// whose gradients come from distributed.DataParallel; rank 0 prints
// progress and the figures, writes the trained parameters with the
// optimiser state (model.safetensors in -out), and with -json one JSON
// object.
package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/distributed"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

func main() { cli.Main(program()) }

// config holds the settings; the tagged fields are its flags.
type config struct {
	Mode  string `flag:"mode" help:"train or allreduce"`
	Steps int    `flag:"steps" help:"training steps"`
	Batch int    `flag:"batch" help:"global batch size"`
}

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "distributed"}, config{Mode: "train", Steps: 200, Batch: 128}, run)
}

// run runs the -mode on this rank; only rank 0 reports.
func run(c config, env *cli.Env) (any, error) {
	comm, err := distributed.Init()
	if err != nil {
		return nil, err
	}
	var res map[string]any
	switch c.Mode {
	case "train":
		res, err = trainMLP(env.Context(), comm, c.Steps, c.Batch, env.Seed, env.Path("model.safetensors"), env.Log)
	case "allreduce":
		res, err = allReduce(comm, env.Log)
	default:
		err = cli.BadFlagf("unknown -mode %q", c.Mode)
	}
	if err != nil {
		return nil, fmt.Errorf("rank %d: %w", comm.Rank(), err)
	}
	if err := comm.Close(); err != nil {
		return nil, err
	}
	if comm.Rank() != 0 {
		return nil, nil
	}
	return res, nil
}

// trainMLP trains the MNIST MLP data-parallel over comm's ranks until
// steps or until ctx is cancelled (Ctrl-C), then writes rank 0's model.
func trainMLP(ctx context.Context, comm distributed.Comm, steps, batch int, seed uint64, out string, log io.Writer) (map[string]any, error) {
	if batch%comm.Size() != 0 {
		return nil, fmt.Errorf("global batch %d does not split evenly over %d ranks", batch, comm.Size())
	}
	x, labels, err := data.MNIST("train")
	if err != nil {
		return nil, err
	}
	n := x.Shape()[0]
	x = tensor.Reshape(x, n, 784)
	rng := tensor.NewRNG(seed + uint64(comm.Rank())) // rank 0's model is broadcast
	model := nn.NewSequential(nn.NewLinear(rng, 784, 256, true, tensor.Float32), nn.ReLU{},
		nn.NewLinear(rng, 256, 10, true, tensor.Float32))
	params := nn.Values(model.Params())
	dp, err := distributed.NewDataParallel(comm, params)
	if err != nil {
		return nil, err
	}
	opt := optim.NewAdam(params, optim.AdamOptions{LR: 1e-3})
	// Every rank shuffles the same order from the seed and takes its share
	// of it (data.Sharded), batch/size rows per step, so a step covers one
	// global batch.
	loader := data.NewLoader(data.TensorDataset{X: x, Labels: labels}, data.LoaderOptions{
		BatchSize: batch / comm.Size(), DropLast: true,
		Sampler: data.Sharded{Inner: data.Random{N: n, Seed: seed}, Rank: comm.Rank(), Size: comm.Size()}})
	loss := func(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node {
		return losses.CrossEntropy(model.Forward(g.Const(b.X)), b.Labels, losses.CrossEntropyOptions{})
	}
	perEpoch := loader.NumBatches(0)
	if perEpoch == 0 {
		return nil, fmt.Errorf("global batch %d is larger than the %d training digits", batch, n)
	}
	cfg := train.Options{Epochs: (steps + perEpoch - 1) / perEpoch, MaxSteps: steps, Seed: seed,
		// The gradients are averaged over the ranks bucket by bucket while
		// the backward pass is still running.
		Gradients: dp.Gradients}
	if comm.Rank() == 0 {
		cfg.Progress = log
	}
	start := time.Now()
	hist, err := train.New(model, opt, loss, loader, cfg).Fit(ctx)
	if err != nil {
		return nil, err
	}
	// The mean loss over the global batch of the first and the last step:
	// every rank's share has the same size, so it is the mean of the ranks'.
	fl := []float64{hist.StepLoss[0] / float64(comm.Size()), hist.StepLoss[len(hist.StepLoss)-1] / float64(comm.Size())}
	if err := comm.AllReduceFloat64(fl); err != nil {
		return nil, err
	}
	first, last := fl[0], fl[1]
	secs := time.Since(start).Seconds()
	rate := float64(len(hist.StepLoss)*batch) / secs
	if out != "" {
		// Every rank holds the same parameters: rank 0 alone writes them,
		// and the others wait so that the file is complete when any rank
		// returns.
		if comm.Rank() == 0 {
			meta := map[string]string{"ranks": fmt.Sprint(comm.Size()), "steps": fmt.Sprint(steps)}
			if err := checkpoint.Save(out, model, checkpoint.SaveOptions{Optimizer: opt, Metadata: meta}); err != nil {
				return nil, err
			}
		}
		if err := comm.Barrier(); err != nil {
			return nil, err
		}
	}
	if comm.Rank() == 0 {
		fmt.Fprintf(log, "%d ranks (GOMAXPROCS %d each): %.0f samples/s, loss %.4f -> %.4f\n",
			comm.Size(), runtime.GOMAXPROCS(0), rate, first, last)
	}
	return map[string]any{"ranks": comm.Size(), "gomaxprocs": runtime.GOMAXPROCS(0),
		"samples_per_s": rate, "first_loss": first, "final_loss": last}, nil
}

// allReduce times float32 all-reduces from 4 KiB to 64 MiB (median of 10)
// and reports the algorithmic bandwidth, bytes reduced per second.
func allReduce(comm distributed.Comm, log io.Writer) (map[string]any, error) {
	out := map[string]any{"ranks": comm.Size()}
	for elems := 1 << 10; elems <= 1<<24; elems <<= 2 {
		buf := make([]float32, elems)
		var times []float64
		for range 10 {
			if err := comm.Barrier(); err != nil {
				return nil, err
			}
			t0 := time.Now()
			if err := comm.AllReduceFloat32(buf); err != nil {
				return nil, err
			}
			times = append(times, time.Since(t0).Seconds())
		}
		slices.Sort(times)
		gbs := float64(4*elems) / times[len(times)/2] / 1e9
		if comm.Rank() == 0 {
			fmt.Fprintf(log, "allreduce %9d floats: %8.1f µs, %.2f GB/s\n", elems, times[len(times)/2]*1e6, gbs)
		}
		out[fmt.Sprintf("gbs_%d", elems)] = gbs
	}
	return out, nil
}
