package train_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// soakSample is one window of a soak run.
type soakSample struct {
	at         time.Duration // since the start
	rss        float64       // resident memory, bytes (/proc/self/statm)
	goroutines float64
	heap       float64 // live heap after the last collection, bytes
	step       float64 // median step time in the window, seconds
	steps      int     // steps taken in the window
}

// BenchmarkSoak trains the MNIST MLP of examples/mnist-mlp (784-256-10,
// Adam, batches of 128, float32) through train.Trainer.Fit with a
// prefetching loader (2 workers) for the duration in GRADUS_SOAK (say 30m;
// without it the benchmark skips, so ordinary runs never slow down). Every
// window (a hundredth of the run, at least 2 s) it samples resident memory,
// the goroutine count, the live heap and the median step time. After the
// warm-up (the first 10 %), each quantity's drift is the change from the
// median of the first fifth of the remaining windows to the median of the
// last fifth: a leak shows as a trend, which scheduling noise on a shared
// machine does not. It prints the table, reports each drift in percent
// (b.ReportMetric), and fails for a drift above 5 %.
//
//	GRADUS_SOAK=30m go test -run '^$' -bench '^BenchmarkSoak$' -benchtime 1x -timeout 0 ./train
//
// or make soak SOAK=30m.
func BenchmarkSoak(b *testing.B) {
	env := os.Getenv("GRADUS_SOAK")
	if env == "" {
		b.Skip("set GRADUS_SOAK to a duration (e.g. 30m) to run the soak benchmark")
	}
	total, err := time.ParseDuration(env)
	if err != nil || total <= 0 {
		b.Fatalf("GRADUS_SOAK = %q: want a positive duration such as 30m", env)
	}
	if _, err := residentBytes(); err != nil {
		b.Skipf("no resident-memory figure on this system: %v", err)
	}
	window := max(total/100, 2*time.Second)

	x, labels, err := data.MNIST("train")
	if err != nil {
		b.Fatal(err)
	}
	rng := tensor.NewRNG(1)
	model := nn.NewSequential(nn.NewLinear(rng, 784, 256, true, tensor.Float32), nn.ReLU{},
		nn.NewLinear(rng, 256, 10, true, tensor.Float32))
	rec := &stepClock{}
	loss := func(g *graph.Graph, bt data.Batch, _ *tensor.RNG) *graph.Node {
		rec.tick()
		return losses.CrossEntropy(model.Forward(g.Const(bt.X)), bt.Labels, losses.CrossEntropyOptions{})
	}
	loader := data.NewLoader(data.TensorDataset{X: x, Labels: labels},
		data.LoaderOptions{BatchSize: 128, Workers: 2, Seed: 1})
	tr := train.New(model, optim.NewAdam(nn.Values(model.Params()), optim.AdamOptions{LR: 1e-3}), loss, loader,
		train.Options{Epochs: 1 << 30, Seed: 1, StepLossWindow: 10000}) // a bounded history, as a long run would use

	// The sampler is the clock: it takes its last sample, then cancels
	// the training, so no window overlaps the shutdown.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var samples []soakSample
	start := time.Now()
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		defer cancel()
		tick := time.NewTicker(window)
		defer tick.Stop()
		for range int(total / window) {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				samples = append(samples, takeSample(time.Since(start), rec.take()))
			}
		}
	}()
	b.ResetTimer()
	_, err = tr.Fit(ctx)
	b.StopTimer()
	cancel()
	<-sampled
	if !errors.Is(err, context.Canceled) {
		b.Fatalf("Fit ended before the soak's time: %v", err)
	}

	warm := len(samples) / 10
	if len(samples)-warm < 15 { // a fifth of them must hold a few windows
		b.Fatalf("%d windows of %v: too few for a verdict; run longer", len(samples), window)
	}
	// The step-loss history is bounded by StepLossWindow; its size is
	// printed so that a reader can tell it from a leak.
	hist := tr.History().StepLoss
	b.Logf("soak: %v, %d steps, windows of %v, warm-up %d windows; the step-loss history holds %.1f MiB (%.1f MiB capacity)\n%s",
		total, tr.Steps(), window, warm, float64(8*len(hist))/(1<<20), float64(8*cap(hist))/(1<<20), soakTable(samples, warm))
	for _, q := range []struct {
		name, unit string
		get        func(soakSample) float64
	}{
		{"rss", "rss-drift-%", func(s soakSample) float64 { return s.rss }},
		{"goroutines", "goroutine-drift-%", func(s soakSample) float64 { return s.goroutines }},
		{"heap", "heap-drift-%", func(s soakSample) float64 { return s.heap }},
		{"step time", "step-drift-%", func(s soakSample) float64 { return s.step }},
	} {
		d := drift(samples[warm:], q.get)
		b.ReportMetric(100*d, q.unit)
		verdict := "flat"
		if d > 0.05 || d < -0.05 {
			verdict = "NOT flat"
			b.Errorf("%s drifted %+.1f %% after warm-up (limit ±5 %%)", q.name, 100*d)
		}
		b.Logf("%-10s drift %+6.2f %%  %s", q.name, 100*d, verdict)
	}
}

// stepClock records the time between consecutive calls of the loss
// function, which the Trainer makes once per step: the step time as the
// training loop sees it, waiting for the loader included.
type stepClock struct {
	mu    sync.Mutex
	last  time.Time
	steps []float64
}

func (c *stepClock) tick() {
	now := time.Now()
	c.mu.Lock()
	if !c.last.IsZero() {
		c.steps = append(c.steps, now.Sub(c.last).Seconds())
	}
	c.last = now
	c.mu.Unlock()
}

// take returns the step times since the last take and starts afresh.
func (c *stepClock) take() []float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.steps
	c.steps = make([]float64, 0, cap(s))
	return s
}

// takeSample reads the figures of a window. The heap is the live heap as
// the last collection marked it: the heap in use at an arbitrary moment
// swings with the collector's cycle, which would hide a leak or fake one.
func takeSample(at time.Duration, steps []float64) soakSample {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	rss, _ := residentBytes()
	return soakSample{at: at, rss: rss, goroutines: float64(runtime.NumGoroutine()),
		heap: float64(live[0].Value.Uint64()), step: median(steps), steps: len(steps)}
}

// residentBytes reads the resident set size from /proc/self/statm (its
// second field, in pages).
func residentBytes() (float64, error) {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(raw))
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/self/statm: %q", raw)
	}
	pages, err := strconv.ParseFloat(f[1], 64)
	return pages * float64(os.Getpagesize()), err
}

// drift is the relative change from the median of the first fifth of s to
// the median of its last fifth.
func drift(s []soakSample, get func(soakSample) float64) float64 {
	k := max(1, len(s)/5)
	var first, last []float64
	for i := range k {
		first = append(first, get(s[i]))
		last = append(last, get(s[len(s)-k+i]))
	}
	a, z := median(first), median(last)
	if a == 0 {
		return 0
	}
	return (z - a) / a
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

func soakTable(samples []soakSample, warm int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%8s %9s %10s %9s %10s %6s\n", "t", "rss MiB", "goroutines", "live MiB", "step ms", "steps")
	for i, s := range samples {
		mark := ""
		if i < warm {
			mark = "  (warm-up)"
		}
		fmt.Fprintf(&sb, "%8s %9.1f %10.0f %9.1f %10.3f %6d%s\n", s.at.Round(time.Second), s.rss/(1<<20), s.goroutines,
			s.heap/(1<<20), 1e3*s.step, s.steps, mark)
	}
	return sb.String()
}
