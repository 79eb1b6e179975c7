package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/train"
)

// plotLog draws the curves of the JSON-lines log at src into the PNG dst:
// one panel of losses (train_loss and every metric named *loss*) and, if
// there are others, one of the remaining metrics, against the epoch.
func plotLog(src, dst string, out io.Writer) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	recs, err := train.ReadLog(f)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if len(recs) == 0 {
		return fmt.Errorf("%s: no records to plot", src)
	}
	panels := logPanels(recs)
	if err := plot.WritePNG(dst, panels...); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d epochs, %d panels: wrote %s\n", len(recs), len(panels), dst)
	return nil
}

// logPanels turns records into panels of curves against the epoch. A
// metric missing from some records is drawn at the epochs that have it.
func logPanels(recs []train.Record) []plot.Panel {
	names := map[string]bool{}
	for _, r := range recs {
		for k := range r.Metrics {
			names[k] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	curve := func(name string) plot.Curve {
		c := plot.Curve{Name: name}
		for _, r := range recs {
			if v, ok := r.Value(name); ok {
				c.X, c.Y = append(c.X, float64(r.Epoch)), append(c.Y, v)
			}
		}
		return c
	}
	loss := plot.Panel{Title: "loss", XLabel: "epoch", Curves: []plot.Curve{curve("train_loss")}}
	other := plot.Panel{Title: "metrics", XLabel: "epoch"}
	for _, k := range sorted {
		if strings.Contains(k, "loss") {
			loss.Curves = append(loss.Curves, curve(k))
		} else {
			other.Curves = append(other.Curves, curve(k))
		}
	}
	if len(other.Curves) == 0 {
		return []plot.Panel{loss}
	}
	return []plot.Panel{loss, other}
}
