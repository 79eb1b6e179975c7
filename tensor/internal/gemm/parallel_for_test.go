package gemm

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestParallelForRunsEachTaskOnce counts the runs of every task, alone,
// nested inside another call's tasks (whose caller may still hold the offer)
// and from concurrent callers.
func TestParallelForRunsEachTaskOnce(t *testing.T) {
	check := func(name string, runs []atomic.Int32) {
		t.Helper()
		for i := range runs {
			if got := runs[i].Load(); got != 1 {
				t.Fatalf("%s: task %d ran %d times, want 1", name, i, got)
			}
		}
	}
	for _, tasks := range []int{0, 1, 2, 3, 17} {
		for _, threads := range []int{1, 2, 4} {
			runs := make([]atomic.Int32, tasks)
			ParallelFor(tasks, threads, func(i int) { runs[i].Add(1) })
			check("alone", runs)
		}
	}
	outer := make([]atomic.Int32, 4)
	inner := make([]atomic.Int32, 4*9)
	ParallelFor(4, 2, func(i int) {
		outer[i].Add(1)
		ParallelFor(9, 2, func(j int) { inner[i*9+j].Add(1) })
	})
	check("outer", outer)
	check("nested", inner)
	var wg sync.WaitGroup
	conc := make([]atomic.Int32, 8*5)
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 5 {
				ParallelFor(3, 2, func(j int) {
					if j == 0 {
						conc[c*5+r].Add(1)
					}
				})
			}
		}()
	}
	wg.Wait()
	check("concurrent", conc)
	if offer.Load() != nil {
		t.Fatal("a returned call left its offer to the helpers published")
	}
}

// TestParallelForTaskZeroOnCaller checks that task 0 always runs on the
// calling goroutine, while helpers poll for work (the case where one
// could claim it first).
func TestParallelForTaskZeroOnCaller(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two Ps for a helper")
	}
	goid := func() string {
		var buf [64]byte
		n := runtime.Stack(buf[:], false)
		return strings.Fields(string(buf[:n]))[1] // "goroutine N [running]:"
	}
	me := goid()
	for call := range 2000 {
		var ran string
		ParallelFor(2, 2, func(i int) {
			if i == 0 {
				ran = goid()
			}
		})
		if ran != me {
			t.Fatalf("call %d: task 0 ran on goroutine %s, not the caller's %s", call, ran, me)
		}
	}
}
