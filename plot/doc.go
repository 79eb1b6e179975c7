// Package plot draws what training and models produce as PNG files:
// curves (loss and metrics per epoch, series, scatter plots) in panels side
// by side, and grids of images. It is built on gonum.org/v1/plot and sits
// in the toolkit layer, so the core packages never pull it in.
//
//	err := plot.WritePNG("out/training.png",
//		plot.Panel{Title: "loss", XLabel: "epoch", Curves: []plot.Curve{{Name: "train", Y: losses}}})
package plot
