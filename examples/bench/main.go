// Command bench is Gradus's performance suite: GEMM, three small training
// workloads (MLP, CNN, LSTM), a VAE, a DCGAN step, the gradient of a Gaussian
// process's log marginal likelihood, the per-op overhead of the graph and
// autodiff, a transformer encoder block forward and backward,
// and the dense factorisations (SVD, QR, eigh).
// Each workload runs after a warm-up (three steps, then more until a step
// no longer grows the heap, so that the timed steps reuse memory rather
// than fault fresh pages in), is repeated -reps times over a fixed number
// of steps, and reports the median. Its progress lines (standard
// error, none with -quiet) are a header naming the GEMM kernel and the CPU's
// features, then one line per result,
//
//	workload metric value unit
//
// for example `mlp_train samples_per_s 1234.5 1/s`; with -json the header's
// facts and the results are printed as one JSON object on standard output.
// The training workloads also report `allocs_per_step`, the heap
// allocations per step (runtime.MemStats.Mallocs over the timed steps).
// peers/torch_bench.py and peers/gp_numpy.py print the same lines for
// PyTorch and NumPy/SciPy, peers/linalg_numpy.py the factorisations for
// NumPy's LAPACK, and peers/compare.py tabulates all of them.
//
//	go run ./examples/bench [-only mlp_train,gp_lml_grad] [-reps 5] [-steps N]
//	    [-rounds 1] [-sizes 500,1000,2000] [-la-sizes 256,1000] [-threads 2]
//	    [-cpuprofile cpu.prof] [-out out/bench] [-json] [-quiet]
//
// With -rounds R > 1 every selected workload is set up once and then timed
// in turn, R rounds in a row (A B, then B A, …), so that two workloads compared
// with each other (mlp_loader_train against mlp_train) share the machine's
// noise; each round's medians are progress lines
// `round r workload metric value unit`, and the results are the medians over
// rounds. -cpuprofile writes a CPU profile of the run, into the -out folder
// when its path is relative. The workloads use fixed seeds and synthetic
// data, so -seed changes nothing.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/tensor"
)

// Result is one measured number.
type Result struct {
	Workload string  `json:"workload"`
	Metric   string  `json:"metric"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
}

// report is what -json prints: the header's facts and the results.
type report struct {
	Threads    int      `json:"threads"`
	Reps       int      `json:"reps"`
	GoVer      string   `json:"go"`
	Kernel     string   `json:"gemm_kernel"`
	CPU        string   `json:"cpu"`
	Device     string   `json:"device,omitempty"`       // with -device cuda
	Conv       string   `json:"conv_library,omitempty"` // with -device cuda: cuDNN, or why not
	Results    []Result `json:"results"`
	CPUProfile string   `json:"cpuprofile,omitempty"`
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
	gpu    bool // runs on -device cuda (its model and data moved there)
}

// seeded is a workload that records allocations and whose setup builds
// its step from a fresh RNG seeded 1, so that every run times the same
// model on the same data.
func seeded(name string, steps int, report func(string, float64) []Result, setup func(rng *tensor.RNG) step) workload {
	return workload{name: name, steps: steps, allocs: true, report: report,
		setup: func() step { return setup(tensor.NewRNG(1)) }}
}

// onGPU marks w as runnable on -device cuda.
func (w workload) onGPU() workload {
	w.gpu = true
	return w
}

// throughput reports items per second, e.g. samples_per_s.
func throughput(metric string, items int) func(string, float64) []Result {
	return func(name string, sec float64) []Result {
		return []Result{{name, metric, float64(items) / sec, "1/s"}}
	}
}

// config holds bench's own flags.
type config struct {
	only, sizes, laSizes, cpuprofile string
	reps, rounds, steps, threads     int
	device                           cli.Device
}

func main() { cli.Main(program()) }

func program() cli.Program {
	var c config
	return cli.Program{
		Name: "bench",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&c.only, "only", "", "comma-separated workload name prefixes to run (default all)")
			fs.IntVar(&c.reps, "reps", 5, "repetitions per workload; the median is reported")
			fs.IntVar(&c.rounds, "rounds", 1, "rounds over the selected workloads, alternating them; the median over rounds is reported")
			fs.IntVar(&c.steps, "steps", 0, "steps per repetition (0: each workload's default)")
			fs.StringVar(&c.sizes, "sizes", "500,1000,2000", "comma-separated GP training-set sizes")
			fs.StringVar(&c.laSizes, "la-sizes", "256,1000", "comma-separated matrix orders of the SVD, QR and eigh workloads")
			fs.IntVar(&c.threads, "threads", 0, "GOMAXPROCS (0: leave as is)")
			fs.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of the run to this file (a relative path is inside -out)")
			fs.StringVar(&c.device.Name, "device", "cpu", "cpu, or cuda (cuda:N) to run the workloads with a GPU form (mlp_train, cnn_train, lstm_train, gru_train, lstm_bi_train, vae_train, transformer_block, dcgan_train) on an NVIDIA GPU (build with -tags cuda)")
		},
		Run: func(env *cli.Env) (any, error) { return run(c, env) },
	}
}

// run runs the selected workloads, printing the header and the results as
// progress lines, and returns the report.
func run(c config, env *cli.Env) (*report, error) {
	if c.reps < 1 || c.steps < 0 || c.rounds < 1 {
		return nil, cli.BadFlagf("-reps %d, -rounds %d, -steps %d: -reps and -rounds must be ≥ 1 and -steps ≥ 0", c.reps, c.rounds, c.steps)
	}
	o := options{reps: c.reps, steps: c.steps}
	var err error
	if o.sizes, err = parseSizes("-sizes", c.sizes, 2); err != nil {
		return nil, err
	}
	if o.laSizes, err = parseSizes("-la-sizes", c.laSizes, 1); err != nil {
		return nil, err
	}
	if device, err = c.device.Open(); err != nil {
		return nil, err
	}
	ws := selectWorkloads(allWorkloads(o), c.only)
	if len(ws) == 0 {
		return nil, cli.BadFlagf("-only %q matches no workload", c.only)
	}
	if ws, err = deviceWorkloads(ws); err != nil {
		return nil, cli.BadFlagf("%v", err)
	}
	if err := setThreads(c.threads); err != nil {
		return nil, err
	}
	o.threads = runtime.GOMAXPROCS(0)
	rep := &report{Threads: o.threads, Reps: o.reps, GoVer: runtime.Version(), Kernel: tensor.MatMulKernel(), CPU: cpuFeatures()}
	if c.cpuprofile != "" {
		rep.CPUProfile = c.cpuprofile
		if !filepath.IsAbs(rep.CPUProfile) {
			rep.CPUProfile = env.Path(rep.CPUProfile)
		}
		f, err := os.Create(rep.CPUProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	env.Printf("# gemm kernel: %s; cpu: %s\n", rep.Kernel, rep.CPU)
	if device != tensor.CPU {
		rep.Device, rep.Conv = device.String(), device.ConvLibrary()
		env.Printf("# device: %s; convolutions: %s\n", rep.Device, rep.Conv)
	}
	if c.rounds == 1 {
		for _, w := range ws {
			rs := prepare(w, o).measure(o)
			rep.Results = append(rep.Results, rs...)
			printResults(env.Log, "", rs)
		}
	} else {
		rep.Results = alternate(ws, o, c.rounds, env.Log)
		printResults(env.Log, "", rep.Results)
	}
	return rep, nil
}

// parseSizes parses the comma-separated sizes of flag name, each at least
// least.
func parseSizes(name, list string, least int) ([]int, error) {
	var ns []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < least {
			return nil, cli.BadFlagf("%s: bad entry %q (want integers ≥ %d)", name, s, least)
		}
		ns = append(ns, n)
	}
	return ns, nil
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

// allWorkloads lists every workload in the order they run. A new one
// needs its group in GROUPS of peers/compare.py too, for `compare.py
// --interleave` (TestCompareGroupsCoverWorkloads checks).
func allWorkloads(o options) []workload {
	ws := gemmWorkloads()
	ws = append(ws, mlpWorkload(), mlpLoaderWorkload(), cnnWorkload(), lstmWorkload(), gruWorkload(), lstmBiWorkload())
	ws = append(ws, gpWorkloads(o.sizes)...)
	ws = append(ws, overheadWorkload(), vaeWorkload(), transformerWorkload(), dcganWorkload())
	ws = append(ws, linalgWorkloads(o.laSizes)...)
	ws = append(ws, perExampleWorkloads()...)
	ws = append(ws, capturedWorkloads()...)
	ws = append(ws, rematWorkloads()...)
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
	if n == 0 {
		warm = 3
	}
	per := math.Inf(1)
	step := func() {
		t0 := time.Now()
		st()
		sync()
		per = min(per, time.Since(t0).Seconds())
	}
	for range warm {
		step()
	}
	// Go's collector lets the heap grow to twice what is live before it
	// collects, so a loop's first steps take fresh memory from the kernel
	// and fault it in (1-25 µs a page on these virtual machines) until the
	// heap stops growing; later steps reuse it. The peers' allocators keep
	// freed memory too (compare.py), so the timed steps start once a step
	// has run without growing the heap the process holds, after at most
	// warmHeapSteps more steps or warmHeapTime of them.
	t0 := time.Now()
	for extra := 0; extra < warmHeapSteps && time.Since(t0) < warmHeapTime; extra++ {
		before := heapHeld()
		step()
		if heapHeld() <= before {
			break
		}
	}
	if n == 0 {
		// Calibrate to about 0.1 s per repetition from the fastest warm
		// step: the first one is cold (packing buffers allocated, helper
		// goroutines started), and calibrating on it gave a 1024³ GEMM
		// three steps per repetition, whose timings its slow steps
		// dominated.
		n = max(1, int(0.1/max(per, 1e-9)))
	}
	return prepared{w, st, n}
}

// warmHeapSteps and warmHeapTime bound the warm-up steps that wait for
// the heap to stop growing.
const (
	warmHeapSteps = 12
	warmHeapTime  = 3 * time.Second
)

// heapHeld returns the bytes of heap memory the process holds from the
// kernel: obtained and not released.
func heapHeld() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapSys - ms.HeapReleased
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
		sync()
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
