package train

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress reports training progress to a writer: on a terminal, a progress
// bar over the steps of each epoch showing the running loss; elsewhere (a
// log file, a pipe, a test) nothing per step and one line per epoch, so
// logs stay readable.
type Progress struct {
	w        io.Writer
	terminal bool
	bar      *progressbar.ProgressBar
	desc     string
	sum      float64
	steps    int
}

// NewProgress returns a Progress writing to w. w == nil discards
// everything.
func NewProgress(w io.Writer) *Progress {
	if w == nil {
		w = io.Discard
	}
	p := &Progress{w: w}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.terminal = true
	}
	return p
}

// Printf writes a line (a newline is added if missing).
func (p *Progress) Printf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if len(s) == 0 || s[len(s)-1] != '\n' {
		s += "\n"
	}
	io.WriteString(p.w, s)
}

// StartEpoch begins an epoch of steps training steps, labelled desc
// (e.g. "epoch 3/10").
func (p *Progress) StartEpoch(desc string, steps int) {
	p.desc, p.sum, p.steps = desc, 0, 0
	if p.terminal {
		p.bar = progressbar.NewOptions(steps,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100_000_000), // redraw at most every 0.1 s
			progressbar.OptionClearOnFinish(),
		)
	}
}

// Step records one step's loss.
func (p *Progress) Step(loss float64) {
	p.sum += loss
	p.steps++
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("%s loss %.4f", p.desc, p.sum/float64(p.steps)))
		p.bar.Add(1)
	}
}

// EndEpoch finishes the epoch's bar and writes its summary line.
func (p *Progress) EndEpoch(format string, args ...any) {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
	p.Printf(p.desc+" "+format, args...)
}
