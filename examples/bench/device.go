package main

import (
	"fmt"
	"strings"

	"github.com/gradus-ml/gradus/tensor"
)

// device is where the workloads that can run on a GPU run (-device); the
// CPU unless -device names a CUDA device. It is set once, before any
// workload is set up.
var device = tensor.CPU

// onDevice returns t on the bench's device (t itself on the CPU).
func onDevice(t *tensor.Tensor) *tensor.Tensor { return t.To(device) }

// sync waits for the device's queued work, so that a timed step ends
// when its kernels do; on the CPU it does nothing.
func sync() {
	if err := device.Synchronize(); err != nil {
		panic(err)
	}
}

// deviceWorkloads returns the workloads of ws that run on the bench's
// device: all of them on the CPU; on a GPU those with a GPU form, and an
// error naming those when none of ws has one.
func deviceWorkloads(ws []workload) ([]workload, error) {
	if device == tensor.CPU {
		return ws, nil
	}
	var out []workload
	for _, w := range ws {
		if w.gpu {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		var names []string
		for _, w := range ws {
			names = append(names, w.name)
		}
		return nil, fmt.Errorf("-device %v runs only %s, none of %s", device, strings.Join(gpuWorkloadNames(), ", "), strings.Join(names, ", "))
	}
	return out, nil
}

// gpuWorkloadNames lists the workloads with a GPU form.
func gpuWorkloadNames() []string {
	var names []string
	for _, w := range allWorkloads(options{}) {
		if w.gpu {
			names = append(names, w.name)
		}
	}
	return names
}
