package plot_test

import (
	"fmt"
	"image/png"
	"os"
	"path/filepath"

	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
)

// Training curves in two panels side by side.
func ExampleWritePNG() {
	dir, _ := os.MkdirTemp("", "plot")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "training.png")
	err := plot.WritePNG(path,
		plot.Panel{Title: "loss", XLabel: "epoch", Curves: []plot.Curve{
			{Name: "train", Y: []float64{2.3, 1.1, 0.7, 0.5}},
			{Name: "validation", Y: []float64{2.4, 1.3, 0.9, 0.8}}}},
		plot.Panel{Title: "accuracy", XLabel: "epoch", Curves: []plot.Curve{
			{Name: "validation", Y: []float64{0.4, 0.7, 0.8, 0.85}}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	f, _ := os.Open(path)
	defer f.Close()
	cfg, _ := png.DecodeConfig(f)
	fmt.Println(cfg.Width, "x", cfg.Height)
	// Output: 960 x 336
}

// Four 8×8 images in a 2×2 grid, each pixel drawn 3×3.
func ExampleImageGrid() {
	dir, _ := os.MkdirTemp("", "plot")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "grid.png")
	imgs := tensor.NewRNG(1).Uniform(tensor.Float32, 0, 1, 4, 8, 8)
	if err := plot.ImageGrid(path, imgs, 2, 3, 0, 1); err != nil {
		fmt.Println(err)
		return
	}
	f, _ := os.Open(path)
	defer f.Close()
	cfg, _ := png.DecodeConfig(f)
	fmt.Println(cfg.Width, "x", cfg.Height)
	// Output: 51 x 51
}
