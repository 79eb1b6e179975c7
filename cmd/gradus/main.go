// Command gradus is Gradus's command-line tool.
//
//	gradus inspect FILE.safetensors   names, dtypes, shapes and sizes of a checkpoint's tensors
//	gradus plot LOG.jsonl OUT.png     the curves of a train.Loop log: training loss and each metric per epoch
package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gradus:", err)
		os.Exit(1)
	}
}

const usage = "usage: gradus inspect FILE.safetensors | gradus plot LOG.jsonl OUT.png"

func run(args []string, out io.Writer) error {
	switch {
	case len(args) == 2 && args[0] == "inspect":
		return inspect(args[1], out)
	case len(args) == 3 && args[0] == "plot":
		return plotLog(args[1], args[2], out)
	}
	return fmt.Errorf(usage)
}

// plotLog draws one panel for the training loss and one per metric.
func plotLog(logPath, pngPath string, out io.Writer) error {
	f, err := os.Open(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	es, err := train.ReadLog(f)
	if err != nil {
		return fmt.Errorf("%s: %w", logPath, err)
	}
	if len(es) == 0 {
		return fmt.Errorf("%s: no epochs in the log", logPath)
	}
	loss := make([]float64, len(es))
	metrics := map[string][]float64{}
	for i, e := range es {
		loss[i] = e.TrainLoss
		for k, v := range e.Metrics {
			if metrics[k] == nil {
				metrics[k] = make([]float64, len(es))
				for j := range metrics[k] {
					metrics[k][j] = math.NaN()
				}
			}
			metrics[k][i] = v
		}
	}
	panels := []plot.Panel{{Title: "training loss", XLabel: "epoch", YLabel: "loss", Curves: []plot.Curve{{Name: "train", Y: loss}}}}
	for _, k := range slices.Sorted(maps.Keys(metrics)) {
		panels = append(panels, plot.Panel{Title: k, XLabel: "epoch", YLabel: k, Curves: []plot.Curve{{Name: k, Y: metrics[k]}}})
	}
	if err := plot.WritePNG(pngPath, panels...); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d epochs, %d panels: %s\n", len(es), len(panels), pngPath)
	return nil
}

func inspect(path string, out io.Writer) error {
	infos, meta, err := checkpoint.Inspect(path)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "name\tdtype\tshape\tbytes")
	var total int64
	for _, t := range infos {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\n", t.Name, t.DType, tensor.FormatShape(t.Shape), t.Bytes)
		total += t.Bytes
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d tensors, %d bytes\n", len(infos), total)
	for k, v := range meta {
		fmt.Fprintf(out, "metadata %s = %s\n", k, v)
	}
	return nil
}
