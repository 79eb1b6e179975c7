//go:build unix

package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// crashEnv tells a re-executed test binary to act as the crashing writer:
// "stage,path[,bytes]".
const crashEnv = "GRADUS_CHECKPOINT_CRASH"

// crashRun is a model large enough that a checkpoint is written in many
// chunks (about 800 KB with Adam's moments), with a dropout stream, and
// an optimiser that has taken one step; seed decides every value.
func crashRun(seed uint64) (*nn.Sequential, optim.Optimizer) {
	rng := tensor.NewRNG(seed)
	m := nn.NewSequential(nn.NewLinear(rng, 256, 256, true, tensor.Float32), nn.NewDropout(rng, 0.5))
	opt := optim.NewAdam(nn.Values(m.Params()), optim.AdamOptions{})
	grads := make([]*tensor.Tensor, 0, 2)
	for _, p := range m.Params() {
		grads = append(grads, tensor.Ones(p.Value.DType(), p.Value.Shape()...))
	}
	if err := opt.Step(grads); err != nil {
		panic(err)
	}
	return m, opt
}

// TestWriteFileCrashChild is the child process of
// TestWriteFileCrashConsistency: it saves the second checkpoint and kills
// itself with SIGKILL at the stage it is given. Run directly, without
// the environment variable, it has nothing to do.
func TestWriteFileCrashChild(t *testing.T) {
	spec := os.Getenv(crashEnv)
	if spec == "" {
		t.Skip("the child of TestWriteFileCrashConsistency")
	}
	parts := strings.Split(spec, ",")
	stage, path := parts[0], parts[1]
	if stage == "half" {
		n, err := strconv.Atoi(parts[2])
		require.NoError(t, err)
		failpoints.writer = func(w io.Writer) io.Writer { return &killingWriter{w: w, left: n} }
	} else {
		failpoints.at = func(step string) error {
			if step == stage {
				kill()
			}
			return nil
		}
	}
	m, opt := crashRun(2)
	require.NoError(t, Save(path, m, SaveOptions{Optimizer: opt, Metadata: map[string]string{"version": "2"}}))
	t.Fatalf("stage %q was never reached: the save completed", stage)
}

// kill ends the process at once, as a power cut or the OOM killer would:
// no deferred call, no cleanup.
func kill() {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL to oneself is delivered before kill returns
}

// killingWriter passes left bytes to the file and then kills the process.
type killingWriter struct {
	w    io.Writer
	left int
}

func (k *killingWriter) Write(p []byte) (int, error) {
	if len(p) >= k.left {
		k.w.Write(p[:k.left])
		kill()
	}
	k.left -= len(p)
	return k.w.Write(p)
}

// A process killed while it saves a checkpoint over an older one, at each
// stage of the write, leaves the path holding one of the two checkpoints
// whole, byte for byte, and it loads: the old one until the rename, the
// new one from then on. What the crash leaves besides is a temporary
// file under another name (empty, a prefix of the new file, or all of
// it), never the target; the half-written one does not even parse. A
// later save over the debris succeeds.
func TestWriteFileCrashConsistency(t *testing.T) {
	// The bytes of both checkpoints, written where nothing crashes.
	ref := t.TempDir()
	m1, opt1 := crashRun(1)
	m2, opt2 := crashRun(2)
	old, next := filepath.Join(ref, "old.safetensors"), filepath.Join(ref, "next.safetensors")
	require.NoError(t, Save(old, m1, SaveOptions{Optimizer: opt1, Metadata: map[string]string{"version": "1"}}))
	require.NoError(t, Save(next, m2, SaveOptions{Optimizer: opt2, Metadata: map[string]string{"version": "2"}}))
	oldBytes, nextBytes := readFileBytes(t, old), readFileBytes(t, next)
	half := len(nextBytes) / 2

	cases := []struct {
		stage   string
		version string // the checkpoint the path must hold afterwards
		debris  []byte // what the temporary file must hold; nil: none left
	}{
		{"write", "1", []byte{}},        // the temporary file was just created
		{"half", "1", nextBytes[:half]}, // half the bytes are in it
		{"sync", "1", nextBytes},        // all written, not yet synced
		{"rename", "1", nextBytes},      // synced and closed, not yet renamed
		{"syncdir", "2", nil},           // renamed, the directory not yet synced
	}
	for _, c := range cases {
		t.Run(c.stage, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "model.safetensors")
			writeFileBytes(t, path, oldBytes)

			cmd := exec.Command(os.Args[0], "-test.run=^TestWriteFileCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%s,%d", crashEnv, c.stage, path, half))
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "the child must not succeed: %v\n%s", err, out)
			ws := exit.Sys().(syscall.WaitStatus)
			require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the child must die by SIGKILL, got %v\n%s", exit, out)

			want := map[string][]byte{"1": oldBytes, "2": nextBytes}[c.version]
			assert.True(t, bytes.Equal(want, readFileBytes(t, path)), "the path holds checkpoint %s whole", c.version)
			m, opt := crashRun(3)
			meta, err := LoadInto(path, m, LoadOptions{Optimizer: opt})
			require.NoError(t, err)
			assert.Equal(t, c.version, meta["version"])
			src := map[string]*nn.Sequential{"1": m1, "2": m2}[c.version]
			assert.Equal(t, snapshot(nn.State(src)), snapshot(nn.State(m)))

			var debris []string
			for _, name := range dirNames(t, dir) {
				if name != "model.safetensors" {
					debris = append(debris, name)
				}
			}
			if c.debris == nil {
				assert.Empty(t, debris)
			} else {
				require.Len(t, debris, 1)
				assert.True(t, strings.HasPrefix(debris[0], ".model.safetensors.tmp-"), debris[0])
				got := readFileBytes(t, filepath.Join(dir, debris[0]))
				assert.True(t, bytes.Equal(c.debris, got), "the temporary file holds %d bytes of the new checkpoint, got %d", len(c.debris), len(got))
				if len(got) < len(nextBytes) {
					_, _, err := ReadFile(filepath.Join(dir, debris[0]))
					assert.Error(t, err, "a partial file does not parse")
				}
			}

			// The next save replaces the checkpoint as usual.
			require.NoError(t, Save(path, m2, SaveOptions{Optimizer: opt2, Metadata: map[string]string{"version": "2"}}))
			assert.True(t, bytes.Equal(nextBytes, readFileBytes(t, path)))
		})
	}
}
