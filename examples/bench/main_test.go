package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/cpuinfo"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// documented lists every result of a full run with -sizes 20,40
// -la-sizes 8,16, as the package documentation and README name them:
// workload, metric, unit.
var documented = [][3]string{
	{"gemm_f32_n1024", "gflops", "GFLOP/s"},
	{"gemm_f32_n1024", "peak_fraction", "1"},
	{"gemm_f32_n256", "gflops", "GFLOP/s"},
	{"gemm_f32_n256", "peak_fraction", "1"},
	{"gemm_f64_n1024", "gflops", "GFLOP/s"},
	{"gemm_f64_n1024", "peak_fraction", "1"},
	{"gemm_f64_n256", "gflops", "GFLOP/s"},
	{"gemm_f64_n256", "peak_fraction", "1"},
	{"mlp_train", "samples_per_s", "1/s"},
	{"mlp_train", "allocs_per_step", "1"},
	{"mlp_loader_train", "samples_per_s", "1/s"},
	{"mlp_loader_train", "allocs_per_step", "1"},
	{"cnn_train", "samples_per_s", "1/s"},
	{"cnn_train", "allocs_per_step", "1"},
	{"lstm_train", "sequences_per_s", "1/s"},
	{"lstm_train", "allocs_per_step", "1"},
	{"gru_train", "sequences_per_s", "1/s"},
	{"gru_train", "allocs_per_step", "1"},
	{"lstm_bi_train", "sequences_per_s", "1/s"},
	{"lstm_bi_train", "allocs_per_step", "1"},
	{"gp_lml_grad_n20", "ms_per_eval", "ms"},
	{"gp_lml_grad_n40", "ms_per_eval", "ms"},
	{"op_overhead", "ns_per_op", "ns"},
	{"vae_train", "samples_per_s", "1/s"},
	{"vae_train", "allocs_per_step", "1"},
	{"transformer_block", "sequences_per_s", "1/s"},
	{"transformer_block", "allocs_per_step", "1"},
	{"dcgan_train", "samples_per_s", "1/s"},
	{"dcgan_train", "allocs_per_step", "1"},
	{"svd_f64_n8", "ms_per_op", "ms"},
	{"qr_f64_n8", "ms_per_op", "ms"},
	{"eigh_f64_n8", "ms_per_op", "ms"},
	{"svd_f64_n16", "ms_per_op", "ms"},
	{"qr_f64_n16", "ms_per_op", "ms"},
	{"eigh_f64_n16", "ms_per_op", "ms"},
	{"perexample_batch_grad", "ms_per_batch", "ms"},
	{"perexample_batch_grad", "allocs_per_step", "1"},
	{"perexample_loop", "ms_per_batch", "ms"},
	{"perexample_loop", "allocs_per_step", "1"},
	{"perexample", "ms_per_batch", "ms"},
	{"perexample", "ratio_to_batch_grad", "x"},
	{"perexample", "speedup_over_loop", "x"},
	{"perexample", "allocs_per_step", "1"},
	{"mlp_train_captured_eager", "samples_per_s", "1/s"},
	{"mlp_train_captured_eager", "allocs_per_step", "1"},
	{"mlp_train_captured_unfused", "samples_per_s", "1/s"},
	{"mlp_train_captured_unfused", "allocs_per_step", "1"},
	{"mlp_train_captured", "samples_per_s", "1/s"},
	{"mlp_train_captured", "speedup_over_eager", "x"},
	{"mlp_train_captured", "speedup_over_unfused", "x"},
	{"mlp_train_captured", "allocs_per_step", "1"},
	{"lstm_train_captured_eager", "sequences_per_s", "1/s"},
	{"lstm_train_captured_eager", "allocs_per_step", "1"},
	{"lstm_train_captured_unfused", "sequences_per_s", "1/s"},
	{"lstm_train_captured_unfused", "allocs_per_step", "1"},
	{"lstm_train_captured", "sequences_per_s", "1/s"},
	{"lstm_train_captured", "speedup_over_eager", "x"},
	{"lstm_train_captured", "speedup_over_unfused", "x"},
	{"lstm_train_captured", "allocs_per_step", "1"},
	{"gru_train_captured_eager", "sequences_per_s", "1/s"},
	{"gru_train_captured_eager", "allocs_per_step", "1"},
	{"gru_train_captured_unfused", "sequences_per_s", "1/s"},
	{"gru_train_captured_unfused", "allocs_per_step", "1"},
	{"gru_train_captured", "sequences_per_s", "1/s"},
	{"gru_train_captured", "speedup_over_eager", "x"},
	{"gru_train_captured", "speedup_over_unfused", "x"},
	{"gru_train_captured", "allocs_per_step", "1"},
	{"transformer_block_captured_eager", "sequences_per_s", "1/s"},
	{"transformer_block_captured_eager", "allocs_per_step", "1"},
	{"transformer_block_captured", "sequences_per_s", "1/s"},
	{"transformer_block_captured", "speedup_over_eager", "x"},
	{"transformer_block_captured", "allocs_per_step", "1"},
	{"remat_mlp32_plain", "ms_per_step", "ms"},
	{"remat_mlp32_plain", "peak_buffer_mb", "MiB"},
	{"remat_mlp32_plain", "allocs_per_step", "1"},
	{"remat_mlp32", "ms_per_step", "ms"},
	{"remat_mlp32", "peak_buffer_mb", "MiB"},
	{"remat_mlp32", "time_ratio_to_plain", "x"},
	{"remat_mlp32", "memory_ratio_to_plain", "x"},
	{"remat_mlp32", "allocs_per_step", "1"},
}

// runReport runs the program with -reps reps and args through package cli,
// checks the JSON object's header facts and what want lists, and returns
// the report and the run.
func runReport(t *testing.T, reps int, want clitest.Expect, args ...string) (report, *clitest.Result) {
	t.Helper()
	want.Fields = append(want.Fields, "threads", "reps", "go", "gemm_kernel", "cpu", "results")
	got, r := clitest.Check[report](t, program(), want, append([]string{"-steps", "1", "-reps", strconv.Itoa(reps)}, args...)...)
	assert.Equal(t, reps, got.Reps)
	assert.Equal(t, runtime.GOMAXPROCS(0), got.Threads)
	assert.Equal(t, runtime.Version(), got.GoVer)
	assert.Equal(t, tensor.MatMulKernel(), got.Kernel)
	assert.True(t, strings.HasPrefix(got.CPU, runtime.GOARCH), "cpu %q", got.CPU)
	return got, r
}

// TestRunAll runs every workload for one step through package cli and
// checks that the JSON object lists each result with the documented names,
// in order, and a positive finite value (allocation counts may be zero).
func TestRunAll(t *testing.T) {
	got, _ := runReport(t, 1, clitest.Expect{}, "-sizes", "20,40", "-la-sizes", "8,16")
	want := documented
	if cpuinfo.VectorBits() < 256 { // no FMA probe: no peak_fraction
		want = slices.DeleteFunc(slices.Clone(want), func(d [3]string) bool { return d[1] == "peak_fraction" })
	}
	require.Len(t, got.Results, len(want))
	for i, res := range got.Results {
		assert.Equal(t, want[i], [3]string{res.Workload, res.Metric, res.Unit}, "result %d", i)
		if res.Metric == "allocs_per_step" {
			assert.GreaterOrEqual(t, res.Value, 0.0, "%+v", res)
		} else {
			assert.Greater(t, res.Value, 0.0, "%+v", res)
			assert.Less(t, res.Value, 1e12, "%+v", res)
		}
	}
}

// TestRunOnly checks -only's prefix selection.
func TestRunOnly(t *testing.T) {
	cases := []struct {
		only string
		want [][2]string // workload, metric
	}{
		{"op_overhead", [][2]string{{"op_overhead", "ns_per_op"}}},
		{"gp_lml_grad", [][2]string{{"gp_lml_grad_n16", "ms_per_eval"}, {"gp_lml_grad_n24", "ms_per_eval"}}},
		{"gp_lml_grad_n24, op_", [][2]string{{"gp_lml_grad_n24", "ms_per_eval"}, {"op_overhead", "ns_per_op"}}},
		{"gemm_f64_n256", [][2]string{{"gemm_f64_n256", "gflops"}, {"gemm_f64_n256", "peak_fraction"}}},
		{"svd", [][2]string{{"svd_f64_n8", "ms_per_op"}, {"svd_f64_n16", "ms_per_op"}}},
	}
	for _, c := range cases {
		t.Run(c.only, func(t *testing.T) {
			got, _ := runReport(t, 2, clitest.Expect{}, "-sizes", "16,24", "-la-sizes", "8,16", "-only", c.only)
			require.Len(t, got.Results, len(c.want))
			for i, w := range c.want {
				assert.Equal(t, w, [2]string{got.Results[i].Workload, got.Results[i].Metric})
				assert.Greater(t, got.Results[i].Value, 0.0)
			}
		})
	}
}

// TestRunRounds checks the progress lines of -rounds: the header, then each
// result of every round in workload order, then one line per result, the
// median over rounds, which are the JSON object's results.
func TestRunRounds(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"-out", t.TempDir(), "-json", "-steps", "1", "-reps", "1", "-rounds", "3", "-only", "op_overhead,mlp_loader"}
	require.Equal(t, 0, cli.Run(context.Background(), program(), args, &stdout, &stderr), stderr.String())
	var got report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &got), stdout.String())
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	require.Len(t, lines, 1+3*3+3, stderr.String())
	assert.Equal(t, "# gemm kernel: "+got.Kernel+"; cpu: "+got.CPU, lines[0])
	var order []string
	for _, line := range lines[1:10] {
		f := strings.Fields(line)
		require.Len(t, f, 6, "line %q", line)
		require.Equal(t, "round", f[0])
		order = append(order, f[1]+" "+f[2]+" "+f[3])
	}
	var want []string
	for r := range 3 {
		for _, s := range []string{"mlp_loader_train samples_per_s", "mlp_loader_train allocs_per_step", "op_overhead ns_per_op"} {
			want = append(want, strconv.Itoa(r+1)+" "+s)
		}
	}
	assert.Equal(t, want, order)
	require.Len(t, got.Results, 3)
	for i, res := range got.Results {
		assert.Equal(t, fmt.Sprintf("%s %s %.6g %s", res.Workload, res.Metric, res.Value, res.Unit), lines[10+i])
	}
}

// TestCPUProfile checks that a relative -cpuprofile lands in the -out
// folder and is named in the JSON object.
func TestCPUProfile(t *testing.T) {
	got, r := runReport(t, 1, clitest.Expect{Files: []string{"cpu.prof"}}, "-only", "op_overhead", "-cpuprofile", "cpu.prof")
	assert.Equal(t, r.Path("cpu.prof"), got.CPUProfile)
}

// TestRunErrors checks that bad flags exit with code 2, not panics or
// empty runs.
func TestRunErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-only", "nosuchworkload"},
		{"-reps", "0"},
		{"-rounds", "0"},
		{"-steps", "-1"},
		{"-sizes", "10,x"},
		{"-sizes", "1"},
		{"-la-sizes", "0"},
		{"-data", "iris"},
		{"-nosuchflag"},
	} {
		clitest.Fails(t, program(), 2, args...)
	}
}

// TestMedian checks the median against values worked out by hand.
func TestMedian(t *testing.T) {
	cases := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{7}, 7},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{5, 5, 1, 9, 100}, 5},
	}
	for _, c := range cases {
		xs := append([]float64(nil), c.xs...)
		assert.Equal(t, c.want, median(xs))
		assert.Equal(t, c.xs, xs, "median must not reorder its input")
	}
}

// TestGPGradient checks the GP workload's log marginal likelihood and its
// gradient against the closed forms, computed without the graph from an LU
// inverse and determinant:
//
//	log p = −½ yᵀK⁻¹y − ½ log|K| − (n/2) log 2π
//	∂ log p/∂θ = ½ tr((ααᵀ − K⁻¹) ∂K/∂θ),  α = K⁻¹y,
//	∂K/∂log ℓ = K_f ∘ D/ℓ²,  ∂K/∂log σf² = K_f,  ∂K/∂log σn² = σn² I.
//
// The workload is float64 only (a GP's Cholesky needs it), so there is no
// float32 case.
func TestGPGradient(t *testing.T) {
	cases := []struct {
		n     int
		theta [3]float64
	}{
		{12, [3]float64{0, 0, math.Log(0.01)}},
		{9, [3]float64{0.3, -0.4, math.Log(0.2)}},
		{20, [3]float64{-0.5, 0.7, math.Log(0.05)}},
	}
	for _, c := range cases {
		p := newGPProblem(c.n)
		p.theta = c.theta
		n := c.n
		ell2, sf2, sn2 := math.Exp(2*c.theta[0]), math.Exp(c.theta[1]), math.Exp(c.theta[2])
		d, y := p.d2.Float64s(), p.y.Float64s()
		kf := make([]float64, n*n)
		kv := make([]float64, n*n)
		for i := range kf {
			kf[i] = sf2 * math.Exp(-d[i]/(2*ell2))
			kv[i] = kf[i]
			if i%(n+1) == 0 {
				kv[i] += sn2
			}
		}
		k := tensor.FromFloat64s(kv, n, n)
		kinvT, err := tensor.Inverse(k)
		require.NoError(t, err)
		kinv := kinvT.Contiguous().Float64s()
		_, logdet, err := tensor.SlogDet(k)
		require.NoError(t, err)
		alpha := make([]float64, n)
		quad := 0.0
		for i := range n {
			for j := range n {
				alpha[i] += kinv[i*n+j] * y[j]
			}
			quad += y[i] * alpha[i]
		}
		wantLML := -0.5*quad - 0.5*logdet.Item() - 0.5*float64(n)*math.Log(2*math.Pi)
		var want [3]float64
		for i := range n {
			for j := range n {
				w := alpha[i]*alpha[j] - kinv[i*n+j]
				want[0] += 0.5 * w * kf[i*n+j] * d[i*n+j] / ell2
				want[1] += 0.5 * w * kf[i*n+j]
				if i == j {
					want[2] += 0.5 * w * sn2
				}
			}
		}
		lml, grad := p.lmlGrad(graph.New())
		assert.InDelta(t, wantLML, lml, 1e-9*math.Abs(wantLML), "n=%d", n)
		for i := range grad {
			assert.InDelta(t, want[i], grad[i], 1e-8*(1+math.Abs(want[i])), "n=%d θ%d", n, i)
		}
	}
}

// TestCompareGroupsCoverWorkloads checks that the workload groups of
// `compare.py --interleave` (GROUPS in peers/compare.py) give every
// workload exactly one group, so none is left out or timed twice a round.
func TestCompareGroupsCoverWorkloads(t *testing.T) {
	src, err := os.ReadFile("peers/compare.py")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)\nGROUPS = \[(.*?)\]`).FindSubmatch(src)
	if m == nil {
		t.Fatal("GROUPS not found in peers/compare.py")
	}
	var prefixes []string
	for _, q := range regexp.MustCompile(`"([^"]*)"`).FindAllSubmatch(m[1], -1) {
		prefixes = append(prefixes, strings.Split(string(q[1]), ",")...)
	}
	if len(prefixes) < 10 {
		t.Fatalf("GROUPS parsed as %v", prefixes)
	}
	for _, w := range allWorkloads(options{sizes: []int{500, 2000}, laSizes: []int{256, 1000}}) {
		n := 0
		for _, p := range prefixes {
			if strings.HasPrefix(w.name, p) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("workload %s matches %d prefixes of compare.py's GROUPS, want 1", w.name, n)
		}
	}
}
