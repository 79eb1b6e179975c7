// Package train is the training loop of the toolkit: Loop runs epochs over
// a data.Loader with an optimiser from package optim and a loss built by
// the caller, with gradient accumulation, clipping by global norm, a
// learning-rate schedule, validation metrics after each epoch, early
// stopping on a monitored metric, atomic checkpoints of the last and the
// best epoch, exact resumption from the last one, callbacks, a JSON Lines
// log and a progress bar (Progress). Step drives the same loop one
// micro-batch at a time.
//
//	loop, err := train.New(model, optim.NewAdam(nn.Values(model.Params()), optim.AdamConfig{LR: 1e-3}),
//		func(g *graph.Graph, b data.Batch) *graph.Node {
//			return losses.CrossEntropy(model.Forward(g.Const(b.X)), labels(b))
//		}, loader, train.Config{Epochs: 10, Validate: validate, Monitor: "accuracy", Maximize: true,
//			Patience: 3, Dir: "runs/mlp", Resume: true, Log: logFile})
//	history, err := loop.Run()
//
// It sits above the core (tensor, graph, autodiff never import it).
package train

import (
	"fmt"
	"slices"
	"strings"
)

// metricsText formats metrics for the progress line, sorted by name.
func metricsText(m map[string]float64) string {
	var b strings.Builder
	for _, k := range keys(m) {
		fmt.Fprintf(&b, "  %s %.4g", k, m[k])
	}
	return b.String()
}

func keys(m map[string]float64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
