package gemm

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Helper goroutines.
//
// Waking a parked goroutine for every call is slow on a busy machine: the
// OS tends to queue the woken thread behind the caller, so the "parallel"
// work ends up running after the caller's share instead of beside it. Like
// the worker threads of BLAS libraries, helpers are therefore started once
// and, after finishing a task, keep polling for new work for helperSpin
// before they park. A multi-goroutine call publishes itself in offer; polling
// helpers join it by claiming tasks from its fixed task list (see parallel),
// so which goroutine runs a task never affects the result. A call that finds
// offer taken by a concurrent call spawns goroutines instead.

// runner is a multi-goroutine call that helpers can join.
type runner interface {
	// join runs tasks of the call if it still accepts helpers.
	join()
}

type offerBox struct{ r runner }

var (
	offer    atomic.Pointer[offerBox] // call currently accepting helpers
	helpers  atomic.Int32             // helper goroutines started
	spinning atomic.Int32             // helpers currently polling
	wakeCh   = make(chan struct{}, 64)
)

// helperSpin is how long an idle helper polls for work before parking.
const helperSpin = 100 * time.Microsecond

// ensureHelpers starts helper goroutines until there are at least n, but
// never more than GOMAXPROCS-1.
func ensureHelpers(n int) {
	n = min(n, runtime.GOMAXPROCS(0)-1)
	for {
		h := helpers.Load()
		if int(h) >= n {
			return
		}
		if helpers.CompareAndSwap(h, h+1) {
			spinning.Add(1)
			go helper()
		}
	}
}

// publish offers r to helpers, asking for up to n of them. It reports
// whether r was published; the caller must then withdraw it.
//
// A helper it wakes (or starts) is made runnable on the caller's own P,
// next in line after the caller, which then computes for a whole task
// without yielding: the helper would wait for another P to steal it, and
// on two cores often arrived after the caller had taken every task, so
// the call ran alone, counted as a miss, and four such closed the gate
// (2026-11-28, 256³ products on the quiet Zen 5: 28-90 % of calls gated
// at 170 µs against 100-115 µs helped). Yielding once lets the woken
// helper start at once, on this P or another.
func publish(r runner, n int) (*offerBox, bool) {
	box := &offerBox{r: r}
	if !offer.CompareAndSwap(nil, box) {
		return nil, false
	}
	started := helpers.Load()
	ensureHelpers(n)
	woke := helpers.Load() > started
	for i := spinning.Load(); i < int32(n); i++ {
		select {
		case wakeCh <- struct{}{}:
			woke = true
		default:
		}
	}
	if woke {
		runtime.Gosched()
	}
	return box, true
}

// withdraw stops offering box to helpers.
func withdraw(box *offerBox) {
	offer.CompareAndSwap(box, nil)
}

func helper() {
	var last *offerBox
	for {
		deadline := time.Now().Add(helperSpin)
		for i := 1; ; i++ {
			if o := offer.Load(); o != nil && o != last {
				last = o
				o.r.join()
				deadline = time.Now().Add(helperSpin)
				continue
			}
			if i%64 == 0 {
				if time.Now().After(deadline) {
					break
				}
				runtime.Gosched()
			}
		}
		spinning.Add(-1)
		<-wakeCh
		spinning.Add(1)
	}
}

// Gating. When the other cores are busy (a loaded or oversubscribed
// machine), helpers rarely get CPU time while a call runs: the caller ends
// up doing all tasks anyway, and a helper that joins late, is descheduled in
// the middle of a task, or polls on the caller's core only slows it down.
// After missLimit consecutive multi-goroutine calls that did not pay off
// (see parallel.run), calls below gateMaxWork run on the calling goroutine
// alone, except every probeEvery-th, which tries again. Probing every
// fourth call rather than every sixteenth, with publish's yield, took a
// loop of 256³ float32 products on the quiet two-core Zen 5 from 142-161
// to 126-131 µs per call on average (medians of six alternated runs;
// OpenBLAS through NumPy 151-157 µs), and to 240-245 against 227-230 µs
// with a busy loop on the other core. This only changes which goroutine
// computes what, never the result.
var (
	parMisses atomic.Int32  // consecutive multi-goroutine calls that did not pay off
	parCalls  atomic.Uint32 // gated calls, for probing
)

const (
	missLimit  = 4
	probeEvery = 4
	// gateMaxWork: calls with m·n·k at or above this always use helpers;
	// they last long enough for a late helper to be worth it.
	gateMaxWork = 320 * 320 * 320
)

// gateParallel reports whether a call of the given m·n·k that could use
// helpers should run on the calling goroutine alone, and otherwise whether
// the call is a probe of a gated state (helpers are parked then, so a probe
// counts as paying off as soon as a helper ran a task).
func gateParallel(work float64) (gated, probe bool) {
	if work >= gateMaxWork || parMisses.Load() < missLimit {
		return false, false
	}
	if parCalls.Add(1)%probeEvery != 0 {
		return true, false
	}
	return false, true
}

// recordParallel records whether a multi-goroutine call paid off.
func recordParallel(paidOff bool) {
	if paidOff {
		parMisses.Store(0)
	} else if parMisses.Load() < missLimit {
		parMisses.Add(1)
	}
}
