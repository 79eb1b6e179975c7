// Package cli is the skeleton every program in examples/ shares: the common
// flags, running the program, the exit code and the final JSON object.
//
// A program describes itself as a Program and hands it to Main:
//
//	func main() { cli.Main(program()) }
//
//	func program() cli.Program {
//		var steps int
//		return cli.Program{
//			Name:  "linreg",
//			Flags: func(fs *flag.FlagSet) { fs.IntVar(&steps, "steps", 300, "gradient-descent steps") },
//			Run:   func(env *cli.Env) (any, error) { return run(steps, env) },
//		}
//	}
//
// A program whose own settings are the fields of one struct declares each
// of them once, as a tagged field, and lets Configured register the flags
// and call its run function (see Configured).
//
// The common flags are -seed (default 1), -data (what it names is the
// program's: a data set, a CSV or a folder; see Program.Data), -out DIR
// (always a folder, created if missing, default out/<name>: every picture
// and file a program writes goes into it), -json (print the value Run
// returns as one JSON object on standard output at the end) and -quiet (no
// progress lines; they go to standard error otherwise). The exit code is 0
// on success, 1 when Run fails and 2 on bad flags (including a BadFlag
// error returned by Run).
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/gradus-ml/gradus/tensor"
)

// Program is one example program.
type Program struct {
	// Name is the program's name, used in messages and in the default -out
	// folder out/<Name>.
	Name string
	// Data is the default of -data and DataUsage its help text. An empty
	// DataUsage means the program reads no data: then giving -data is a
	// bad flag.
	Data, DataUsage string
	// Flags registers the program's own flags (nil: none).
	Flags func(fs *flag.FlagSet)
	// Run runs the program once the flags are parsed and returns the value
	// printed as JSON with -json (nil: nothing, as from the workers of a
	// distributed run).
	Run func(env *Env) (any, error)
}

// Env is what a running program gets: the common flags' values and where
// to write.
type Env struct {
	Seed  uint64 // -seed
	Data  string // -data
	Out   string // -out: a folder that exists when Run is called
	JSON  bool   // -json
	Quiet bool   // -quiet
	// Log receives progress lines: standard error, or io.Discard with
	// -quiet.
	Log io.Writer

	fs  *flag.FlagSet
	ctx context.Context
}

// Context is cancelled when the user interrupts the program (Ctrl-C), so
// that the long fits that take it stop at a step boundary and the program
// ends through its error path instead of being killed mid-write. It is
// context.Background() in an Env made by hand.
func (e *Env) Context() context.Context {
	if e.ctx == nil {
		return context.Background()
	}
	return e.ctx
}

// Printf writes a progress line to Log as fmt.Fprintf does.
func (e *Env) Printf(format string, a ...any) { fmt.Fprintf(e.Log, format, a...) }

// Println writes a progress line to Log as fmt.Fprintln does.
func (e *Env) Println(a ...any) { fmt.Fprintln(e.Log, a...) }

// Path is the path of the file name inside the -out folder.
func (e *Env) Path(name string) string { return filepath.Join(e.Out, name) }

// Given reports whether the flag name was set on the command line (so a
// program's preset, such as -demo, can yield to flags given explicitly;
// see Preset).
func (e *Env) Given(name string) bool {
	given := false
	if e.fs == nil { // an Env made by hand, in a test
		return false
	}
	e.fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// BadFlag is an error in the flags' values found by Run (an unknown -data
// set, a negative size): the program exits with code 2.
type BadFlag struct{ Msg string }

// Error returns the message.
func (e *BadFlag) Error() string { return e.Msg }

// BadFlagf returns a *BadFlag with the formatted message.
func BadFlagf(format string, a ...any) error { return &BadFlag{fmt.Sprintf(format, a...)} }

// Main runs p with the process's arguments and exits with its exit code.
// An interrupt (Ctrl-C) cancels Env.Context instead of killing the
// process; a second one kills it.
func Main(p Program) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := Run(ctx, p, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Run parses args, runs p and returns the exit code: 0 on success, 1 when
// p.Run fails, 2 on bad flags. With -json the value p.Run returns is
// written to stdout as one indented JSON object; errors, usage and
// progress go to stderr. ctx becomes the Env's Context.
func Run(ctx context.Context, p Program, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(p.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := &Env{fs: fs, Log: stderr, ctx: ctx}
	fs.Uint64Var(&env.Seed, "seed", 1, "seed of the program's random draws")
	dataUsage := p.DataUsage
	if dataUsage == "" {
		dataUsage = "unused: " + p.Name + " reads no data"
	}
	fs.StringVar(&env.Data, "data", p.Data, dataUsage)
	fs.StringVar(&env.Out, "out", filepath.Join("out", p.Name), "folder for the pictures and files the program writes (created if missing)")
	fs.BoolVar(&env.JSON, "json", false, "print one JSON object with the results on standard output")
	fs.BoolVar(&env.Quiet, "quiet", false, "print no progress lines on standard error")
	if p.Flags != nil {
		p.Flags(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2 // fs has printed the error and the usage
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "%s: "+format+"\n", append([]any{p.Name}, a...)...)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return bad("unexpected arguments %q (every setting is a flag; -h lists them)", fs.Args())
	case env.Out == "":
		return bad("-out must name a folder")
	case p.DataUsage == "" && env.Data != "":
		return bad("-data %q: %s reads no data", env.Data, p.Name)
	}
	if env.Quiet {
		env.Log = io.Discard
	}
	res, err := run(p, env)
	var badFlag *BadFlag
	switch {
	case errors.As(err, &badFlag):
		return bad("%v", err)
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return 1
	}
	if env.JSON && res != nil {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
			return 1
		}
	}
	return 0
}

// run creates the -out folder and calls p.Run, turning a *tensor.Error
// panic into its error.
func run(p Program, env *Env) (res any, err error) {
	defer tensor.Recover(&err)
	if err := os.MkdirAll(env.Out, 0o755); err != nil {
		return nil, err
	}
	return p.Run(env)
}
