package clitest

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/examples/internal/cli"
)

// recorder is a testing.TB that collects failures instead of reporting
// them, so a test can check that Check fails when it must.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Error(a ...any) { r.failures = append(r.failures, fmt.Sprint(a...)) }

func (r *recorder) Errorf(format string, a ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, a...))
}

func (r *recorder) Fatalf(format string, a ...any) {
	r.Errorf(format, a...)
	runtime.Goexit()
}

func (r *recorder) Fatal(a ...any) {
	r.Error(a...)
	runtime.Goexit()
}

// check runs Check on a recorder in its own goroutine (a Fatalf ends only
// that goroutine) and returns the result and the failures.
func check[T any](t *testing.T, p cli.Program, want Expect, args ...string) (T, []string) {
	rec := &recorder{TB: t}
	var res T
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, _ = Check[T](rec, p, want, args...)
	}()
	<-done
	return res, rec.failures
}

// picture writes a side×side PNG (-side, default 20) and reports {"side":
// side, "plot": "a.png"}; -side 0 makes it fail with exit code 1.
func picture() cli.Program {
	var side int
	return cli.Program{
		Name:  "picture",
		Flags: func(fs *flag.FlagSet) { fs.IntVar(&side, "side", 20, "side of the picture (0: fail)") },
		Run: func(env *cli.Env) (any, error) {
			if side == 0 {
				return nil, errors.New("it broke")
			}
			f, err := os.Create(env.Path("a.png"))
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return map[string]any{"side": side, "plot": "a.png"}, png.Encode(f, image.NewGray(image.Rect(0, 0, side, side)))
		},
	}
}

func TestCheck(t *testing.T) {
	type report struct {
		Side int `json:"side"`
	}
	for _, c := range []struct {
		name string
		want Expect
		args []string
		side int
		fail []string // a substring of each failure, in order
	}{
		{"all there", Expect{Fields: []string{"side", "plot"}, Pictures: []string{"a.png"}, Files: []string{"a.png"}}, []string{"-side", "24"}, 24, nil},
		{"missing field", Expect{Fields: []string{"side", "rmse"}}, nil, 20, []string{`no field "rmse"`}},
		{"missing picture and file", Expect{Pictures: []string{"b.png"}, Files: []string{"c.txt"}}, nil, 20, []string{"b.png", "c.txt: want a non-empty file"}},
		{"picture too small", Expect{Pictures: []string{"a.png"}}, []string{"-side", "4"}, 4, []string{"a.png: not a PNG picture (4×4"}},
		{"failing run", Expect{}, []string{"-side", "0"}, 0, []string{"exit code 1", "it broke"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, failures := check[report](t, picture(), c.want, c.args...)
			if res.Side != c.side {
				t.Errorf("decoded side = %d, want %d", res.Side, c.side)
			}
			joined := strings.Join(failures, "\n")
			if len(c.fail) == 0 && len(failures) > 0 {
				t.Errorf("unexpected failures:\n%s", joined)
			}
			for _, f := range c.fail {
				if !strings.Contains(joined, f) {
					t.Errorf("failures lack %q:\n%s", f, joined)
				}
			}
		})
	}
}

// A result type the object does not fit is a failure naming the type.
func TestCheckDecodeMismatch(t *testing.T) {
	_, failures := check[struct {
		Side string `json:"side"`
	}](t, picture(), Expect{})
	if len(failures) != 1 || !strings.Contains(failures[0], "decoding") {
		t.Errorf("failures %q, want one about decoding", failures)
	}
}

func TestLog(t *testing.T) {
	path := t.TempDir() + "/log.jsonl"
	var b strings.Builder
	for i := 1; i <= 3; i++ {
		line, _ := json.Marshal(map[string]any{"epoch": i, "step": 10 * i, "train_loss": 1 / float64(i)})
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	recs := Log(t, path)
	if len(recs) != 3 || recs[2].Step != 30 || recs[1].TrainLoss != 0.5 {
		t.Errorf("records %+v", recs)
	}
}
