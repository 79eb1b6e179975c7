package cli

import (
	"flag"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/gradus-ml/gradus/tensor"
)

// Configured completes p for a program whose own settings are the fields of
// a struct C: each exported field tagged `flag:"name"` becomes the flag
// -name, with the field's value in defaults as its default and the tag
// `help:"..."` as its help text. The fields may be int, uint64, float64,
// string or bool. Run calls run with the parsed settings and the Env (so
// -seed, -data and -out are read from the Env, not copied into C).
//
//	type config struct {
//		Steps int     `flag:"steps" help:"Adam steps"`
//		LR    float64 `flag:"lr" help:"learning rate"`
//	}
//
//	func program() cli.Program {
//		return cli.Configured(cli.Program{Name: "fit"}, config{Steps: 300, LR: 0.1}, run)
//	}
//
// An embedded struct field (such as Training) contributes its own tagged
// fields, so a group of flags several programs share is declared once.
//
// Flags already in p are registered after those of C; p.Run is replaced.
// A tagged field of another type or an unexported one panics when the
// flags are registered: it is a mistake in the program, not in its input.
func Configured[C, R any](p Program, defaults C, run func(C, *Env) (R, error)) Program {
	var cfg C
	more := p.Flags
	p.Flags = func(fs *flag.FlagSet) {
		cfg = defaults // each run starts from the defaults
		StructFlags(fs, &cfg)
		if more != nil {
			more(fs)
		}
	}
	p.Run = func(env *Env) (any, error) { return run(cfg, env) }
	return p
}

// StructFlags registers on fs one flag for each field of the struct *cfg
// tagged `flag:"name"`, as Configured describes, with the field's current
// value as the default.
func StructFlags(fs *flag.FlagSet, cfg any) {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("cli.StructFlags: want a pointer to a struct, got %T", cfg))
	}
	structFlags(fs, v.Elem())
}

func structFlags(fs *flag.FlagSet, v reflect.Value) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.IsExported() {
			structFlags(fs, v.Field(i))
			continue
		}
		name, ok := f.Tag.Lookup("flag")
		if !ok {
			continue
		}
		if !f.IsExported() {
			panic(fmt.Sprintf("cli.StructFlags: field %s of %s (flag -%s) is unexported", f.Name, v.Type(), name))
		}
		help := f.Tag.Get("help")
		switch p := v.Field(i).Addr().Interface().(type) {
		case *int:
			fs.IntVar(p, name, *p, help)
		case *uint64:
			fs.Uint64Var(p, name, *p, help)
		case *float64:
			fs.Float64Var(p, name, *p, help)
		case *string:
			fs.StringVar(p, name, *p, help)
		case *bool:
			fs.BoolVar(p, name, *p, help)
		default:
			panic(fmt.Sprintf("cli.StructFlags: field %s of %s (flag -%s) has type %s; want int, uint64, float64, string or bool", f.Name, v.Type(), name, f.Type))
		}
	}
}

// Training is the flags of a program that trains a network for epochs of
// mini-batches with Adam. A program embeds it in its settings and gives
// its own defaults there:
//
//	type config struct {
//		cli.Training
//		Drop float64 `flag:"drop" help:"masking noise"`
//	}
//
//	cli.Configured(cli.Program{Name: "dae"}, config{Training: cli.Training{Epochs: 5, Batch: 128, LR: 3e-3}, Drop: 0.5}, run)
type Training struct {
	Epochs int     `flag:"epochs" help:"passes over the training set"`
	Batch  int     `flag:"batch" help:"examples per optimiser step"`
	LR     float64 `flag:"lr" help:"Adam's learning rate"`
}

// Preset returns preset(cfg) with every field whose flag was given on the
// command line put back to its value in cfg: a program's preset sizes
// (-demo, -quick) yield to the flags given explicitly. cfg is a struct of
// tagged fields as Configured takes.
//
//	if cfg.Demo {
//		cfg = cli.Preset(env, cfg, demo) // demo shrinks the sizes
//	}
func Preset[C any](env *Env, cfg C, preset func(C) C) C {
	out := preset(cfg)
	keepGiven(env, reflect.ValueOf(&out).Elem(), reflect.ValueOf(cfg))
	return out
}

func keepGiven(env *Env, dst, src reflect.Value) {
	for i := range dst.NumField() {
		f := dst.Type().Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.IsExported() {
			keepGiven(env, dst.Field(i), src.Field(i))
			continue
		}
		if name, ok := f.Tag.Lookup("flag"); ok && env.Given(name) {
			dst.Field(i).Set(src.Field(i))
		}
	}
}

// Device is the -device option of the programs that can train on a GPU:
// embed it in the options struct as Training is.
type Device struct {
	Name string `flag:"device" help:"where to train: cpu, or cuda (cuda:N) for an NVIDIA GPU (the program must be built with -tags cuda)"`
}

// Open returns the device -device names: the CPU for "" or "cpu", else a
// CUDA device, or an error saying why it cannot be used (with the build
// tag to add when the program was built without the CUDA bindings).
func (d Device) Open() (tensor.Device, error) {
	name := strings.ToLower(strings.TrimSpace(d.Name))
	if name == "" || name == "cpu" {
		return tensor.CPU, nil
	}
	ordinal := 0
	if rest, ok := strings.CutPrefix(name, "cuda"); ok {
		if rest != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(rest, ":"))
			if err != nil || !strings.HasPrefix(rest, ":") || n < 0 {
				return tensor.CPU, fmt.Errorf("-device %q: want cpu, cuda or cuda:N", d.Name)
			}
			ordinal = n
		}
	} else {
		return tensor.CPU, fmt.Errorf("-device %q: want cpu, cuda or cuda:N", d.Name)
	}
	dev, err := tensor.CUDA(ordinal)
	if err != nil && !cudaLinked {
		return tensor.CPU, fmt.Errorf("-device %s: %w; build the program with -tags cuda (go run -tags cuda ./examples/...)", name, err)
	}
	return dev, err
}
