// Command bench is Gradus's performance suite: GEMM, three small training
// workloads (MLP, CNN, LSTM), a VAE, a DCGAN step, the gradient of a Gaussian
// process's log marginal likelihood, the per-op overhead of the graph and
// autodiff, a transformer encoder block forward and backward,
// and the dense factorisations (SVD, QR, eigh).
// Each workload runs after a warm-up, is repeated -reps times over a fixed
// number of steps, and reports the median. Output is one line per result,
//
//	workload metric value unit
//
// for example `mlp_train samples_per_s 1234.5 1/s`, or with -json a single
// JSON object. The training workloads also report `allocs_per_step`, the
// heap allocations per step (runtime.MemStats.Mallocs over the timed steps).
// peers/torch_bench.py and peers/gp_numpy.py print the same lines for
// PyTorch and NumPy/SciPy, peers/linalg_numpy.py the factorisations for
// NumPy's LAPACK, and peers/compare.py tabulates all of them.
//
//	go run ./examples/bench [-only mlp_train,gp_lml_grad] [-reps 5] [-steps N]
//	    [-rounds 1] [-sizes 500,1000,2000] [-la-sizes 256,1000] [-threads 2]
//	    [-json] [-cpuprofile file]
//
// With -rounds R > 1 every selected workload is set up once and then timed
// in turn, R rounds in a row (A B, then B A, …), so that two workloads compared
// with each other (mlp_loader_train against mlp_train) share the machine's
// noise; each round's medians go to the log (stderr) as
// `round r workload metric value unit`, and the output is the median over
// rounds.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gradus-ml/gradus/tensor"
)

// Result is one measured number.
type Result struct {
	Workload string  `json:"workload"`
	Metric   string  `json:"metric"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
}

// options are the command-line settings a workload needs.
type options struct {
	reps    int
	steps   int   // 0: each workload's default
	sizes   []int // GP training-set sizes
	laSizes []int // matrix orders of the factorisation workloads
	threads int
}

// step runs one unit of work (a training step, a GEMM, an evaluation).
type step func()

// workload describes one benchmark. setup builds the model and data and
// returns the step to time; the step count defaults to steps unless -steps
// overrides it. report turns the median seconds per step into results.
type workload struct {
	name   string
	steps  int  // default steps per repetition; 0 calibrates to ~0.1 s
	allocs bool // also report allocs_per_step
	setup  func() step
	report func(name string, secPerStep float64) []Result
}

// seeded is a workload that records allocations and whose setup builds
// its step from a fresh RNG seeded 1, so that every run times the same
// model on the same data.
func seeded(name string, steps int, report func(string, float64) []Result, setup func(rng *tensor.RNG) step) workload {
	return workload{name: name, steps: steps, allocs: true, report: report,
		setup: func() step { return setup(tensor.NewRNG(1)) }}
}

// throughput reports items per second, e.g. samples_per_s.
func throughput(metric string, items int) func(string, float64) []Result {
	return func(name string, sec float64) []Result {
		return []Result{{name, metric, float64(items) / sec, "1/s"}}
	}
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run parses args, runs the selected workloads and writes the results to out;
// progress and warnings go to log.
func run(args []string, out, log io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(log)
	only := fs.String("only", "", "comma-separated workload name prefixes to run (default all)")
	reps := fs.Int("reps", 5, "repetitions per workload; the median is reported")
	rounds := fs.Int("rounds", 1, "rounds over the selected workloads, alternating them; the median over rounds is reported")
	steps := fs.Int("steps", 0, "steps per repetition (0: each workload's default)")
	sizes := fs.String("sizes", "500,1000,2000", "comma-separated GP training-set sizes")
	laSizes := fs.String("la-sizes", "256,1000", "comma-separated matrix orders of the SVD, QR and eigh workloads")
	threads := fs.Int("threads", 0, "GOMAXPROCS (0: leave as is)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of lines")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the timed steps to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *reps < 1 || *steps < 0 || *rounds < 1 {
		return fmt.Errorf("-reps and -rounds must be ≥ 1 and -steps ≥ 0")
	}
	if err := setThreads(*threads); err != nil {
		return err
	}
	o := options{reps: *reps, steps: *steps, threads: runtime.GOMAXPROCS(0)}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 2 {
			return fmt.Errorf("bad -sizes entry %q", s)
		}
		o.sizes = append(o.sizes, n)
	}
	for _, s := range strings.Split(*laSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -la-sizes entry %q", s)
		}
		o.laSizes = append(o.laSizes, n)
	}
	ws := selectWorkloads(allWorkloads(o), *only)
	if len(ws) == 0 {
		return fmt.Errorf("-only %q matches no workload", *only)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if !*asJSON {
		fmt.Fprintf(out, "# gemm kernel: %s; cpu: %s\n", tensor.MatMulKernel(), cpuFeatures())
	}
	var all []Result
	if *rounds == 1 {
		for _, w := range ws {
			rs := prepare(w, o).measure(o)
			all = append(all, rs...)
			if !*asJSON {
				printResults(out, "", rs)
			}
		}
	} else {
		all = alternate(ws, o, *rounds, log)
		if !*asJSON {
			printResults(out, "", all)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Threads int      `json:"threads"`
			Reps    int      `json:"reps"`
			GoVer   string   `json:"go"`
			Kernel  string   `json:"gemm_kernel"`
			CPU     string   `json:"cpu"`
			Results []Result `json:"results"`
		}{o.threads, o.reps, runtime.Version(), tensor.MatMulKernel(), cpuFeatures(), all})
	}
	return nil
}

// setThreads makes GOMAXPROCS n. The GEMM package reads GOMAXPROCS once,
// at initialisation, to size its worker pool, so a different count needs a
// fresh process: the command re-executes itself with GOMAXPROCS set.
func setThreads(n int) error {
	if n <= 0 || n == runtime.GOMAXPROCS(0) {
		return nil
	}
	if os.Getenv("GOMAXPROCS") == strconv.Itoa(n) {
		runtime.GOMAXPROCS(n) // already re-executed; should not happen
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	env := append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(n))
	return syscall.Exec(exe, os.Args, env)
}

// selectWorkloads keeps the workloads whose names start with one of the
// comma-separated prefixes in only (all of them when only is empty).
func selectWorkloads(ws []workload, only string) []workload {
	if strings.TrimSpace(only) == "" {
		return ws
	}
	var out []workload
	for _, w := range ws {
		for _, p := range strings.Split(only, ",") {
			if p = strings.TrimSpace(p); p != "" && strings.HasPrefix(w.name, p) {
				out = append(out, w)
				break
			}
		}
	}
	return out
}

// allWorkloads lists every workload in the order they run.
func allWorkloads(o options) []workload {
	ws := gemmWorkloads()
	ws = append(ws, mlpWorkload(), mlpLoaderWorkload(), cnnWorkload(), lstmWorkload())
	ws = append(ws, gpWorkloads(o.sizes)...)
	ws = append(ws, overheadWorkload(), vaeWorkload(), transformerWorkload(), dcganWorkload())
	ws = append(ws, linalgWorkloads(o.laSizes)...)
	return ws
}

// prepared is a workload set up and warmed up, with its steps per
// repetition.
type prepared struct {
	w  workload
	st step
	n  int
}

// prepare sets w up and warms it up.
func prepare(w workload, o options) prepared {
	st := w.setup()
	n := o.steps
	if n == 0 {
		n = w.steps
	}
	warm := max(1, min(3, n))
	t0 := time.Now()
	for range warm {
		st()
	}
	if n == 0 { // calibrate: about 0.1 s per repetition
		per := time.Since(t0).Seconds() / float64(warm)
		n = max(1, int(0.1/max(per, 1e-9)))
	}
	return prepared{w, st, n}
}

// measure times o.reps repetitions of p's steps and returns the median
// results.
func (p prepared) measure(o options) []Result {
	secs := make([]float64, o.reps)
	allocs := make([]float64, o.reps)
	var ms runtime.MemStats
	for r := range o.reps {
		runtime.ReadMemStats(&ms)
		m0 := ms.Mallocs
		t := time.Now()
		for range p.n {
			p.st()
		}
		secs[r] = time.Since(t).Seconds() / float64(p.n)
		runtime.ReadMemStats(&ms)
		allocs[r] = float64(ms.Mallocs-m0) / float64(p.n)
	}
	rs := p.w.report(p.w.name, median(secs))
	if p.w.allocs {
		rs = append(rs, Result{p.w.name, "allocs_per_step", median(allocs), "1"})
	}
	return rs
}

// alternate sets every workload up, then measures them in turn for the
// given number of rounds, writing each round's results to log, and
// returns the median over rounds of each result.
func alternate(ws []workload, o options, rounds int, log io.Writer) []Result {
	ps := make([]prepared, len(ws))
	for i, w := range ws {
		ps[i] = prepare(w, o)
	}
	var per [][]Result // per[r][k]: round r's k-th result
	for r := range rounds {
		// Every other round runs the workloads in reverse (A B, B A, …),
		// so that neither always runs first after the other.
		res := make([][]Result, len(ps))
		for i := range ps {
			if r%2 == 1 {
				i = len(ps) - 1 - i
			}
			res[i] = ps[i].measure(o)
		}
		rs := slices.Concat(res...)
		printResults(log, fmt.Sprintf("round %d ", r+1), rs)
		per = append(per, rs)
	}
	out := slices.Clone(per[0])
	for k := range out {
		vs := make([]float64, rounds)
		for r := range rounds {
			vs[r] = per[r][k].Value
		}
		out[k].Value = median(vs)
	}
	return out
}

// printResults writes one `workload metric value unit` line per result,
// each after prefix.
func printResults(w io.Writer, prefix string, rs []Result) {
	for _, r := range rs {
		fmt.Fprintf(w, "%s%s %s %.6g %s\n", prefix, r.Workload, r.Metric, r.Value, r.Unit)
	}
}

// median returns the median of xs (the mean of the middle two for even
// lengths) without modifying xs.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	k := len(s) / 2
	if len(s)%2 == 1 {
		return s[k]
	}
	return (s[k-1] + s[k]) / 2
}
