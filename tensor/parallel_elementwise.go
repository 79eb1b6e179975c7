package tensor

// parallelElemMin is the shortest contiguous run an elementwise kernel
// splits across goroutines, per goroutine. Below it, starting a goroutine
// and waiting for it costs more than the work saved. Measured with
// BenchmarkElementwise (GOMAXPROCS 1 against 2) on the 2-core machine while
// other jobs ran: with the vector kernels, Add on 10⁵ float32 takes 14 µs
// serial and 20 µs split, and even 10⁶-element runs gained nothing when the
// second core was busy; the threshold is set so that only the largest
// activations (the CNN's 0.4M–0.8M-element maps) are split, where an idle
// second core roughly halves the time.
const parallelElemMin = 1 << 17

// heavyElemMin is parallelElemMin for ops of ten nanoseconds or more per
// element (unaryKernel.heavy): math.Sin on 468² float64 takes 2.1-2.4 ms
// on one goroutine and 1.5-1.7 ms split in two on the loaded 2-core
// machine, and 16,384 elements are ≈ 160 µs of work per goroutine against
// a few µs to start and join it.
const heavyElemMin = 1 << 14
