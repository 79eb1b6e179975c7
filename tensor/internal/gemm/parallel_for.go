package gemm

import (
	"runtime"
	"sync/atomic"
	"time"
)

// ParallelFor runs fn(0), …, fn(tasks−1) on the calling goroutine and up to
// threads−1 of GEMM's helper goroutines, and returns when all have
// finished. Task 0 runs on the calling goroutine, first; the others are
// claimed in order from a shared counter, so a helper that starts late
// claims fewer of them. Which goroutine runs a task must not change its
// result, but a caller can count on task 0 for locality: a loop that
// reads the same rows call after call keeps them in its own core's caches
// (left to the counter, a polling helper claimed task 0 first in a quarter
// of a bidiagonalisation's calls on the Zen 3). When another call (a nested or concurrent one)
// holds the helpers' offer, fresh goroutines join instead. The offer is
// withdrawn as soon as the last task is claimed, so the tasks' own GEMMs
// and nested calls can use the helpers, and also when fn panics on the
// caller. The factorisations use it for the loops they split between the
// cores (a symmetric product's two halves, blocks of rotations): a fresh
// goroutine per call had to be woken by the OS and often started after
// the caller had done its own half, so the call took longer than running
// alone, where a polling helper joins within a microsecond or two.
func ParallelFor(tasks, threads int, fn func(t int)) {
	threads = min(threads, tasks, runtime.GOMAXPROCS(0))
	if threads < 2 {
		for t := range tasks {
			fn(t)
		}
		return
	}
	fc := &forCall{fn: fn, total: int64(tasks), fin: make(chan struct{})}
	fc.next.Store(1) // task 0 is the caller's
	fc.slots.Store(int32(threads - 1))
	box, ok := publish(fc, threads-1)
	if ok {
		fc.box.Store(box)
		defer withdraw(box)
	} else {
		for range threads - 1 {
			go fc.join()
		}
	}
	fc.run(0)
	fc.loop()
	// A helper normally finishes its task within microseconds of the
	// caller: poll a little before parking, as parallel.run does.
	deadline := time.Now().Add(forPatience)
	for i := 1; fc.done.Load() < fc.total; i++ {
		if i%32 == 0 {
			if time.Now().After(deadline) {
				break
			}
			runtime.Gosched()
		}
	}
	<-fc.fin
}

// forPatience bounds the caller's polling for its helpers' last tasks.
const forPatience = 50 * time.Microsecond

// forCall is one ParallelFor call that helpers can join.
type forCall struct {
	fn    func(t int)
	total int64
	next  atomic.Int64
	done  atomic.Int64
	slots atomic.Int32 // helpers that may still join
	fin   chan struct{}
	box   atomic.Pointer[offerBox] // the published offer, withdrawn at the last claim
}

func (fc *forCall) join() {
	if fc.slots.Add(-1) >= 0 {
		fc.loop()
	}
}

func (fc *forCall) loop() {
	for {
		t := fc.next.Add(1) - 1
		if t >= fc.total-1 {
			if b := fc.box.Load(); b != nil {
				withdraw(b) // nothing left to offer
			}
			if t >= fc.total {
				return
			}
		}
		fc.run(t)
	}
}

// run runs task t and closes fin after the last one.
func (fc *forCall) run(t int64) {
	fc.fn(int(t))
	if fc.done.Add(1) == fc.total {
		close(fc.fin)
	}
}
