// Package plot draws what training and models produce as PNG files:
// panels of curves (loss and metrics per epoch, a chain's trace against the
// iteration, scatter plots of classes), histograms, shaded bands (mean ± 2
// sd), heat maps under points (a density, a probability surface, decision
// regions), laid side by side (WritePNG) or in rows (WriteGrid); confusion
// matrices; and grids of images. Every function takes the path of the PNG
// and creates its folder if missing, so a program passes the path inside
// its output folder. It is built on gonum.org/v1/plot and sits in the
// toolkit layer, so the core packages never pull it in.
//
//	err := plot.WritePNG("out/training.png",
//		plot.Panel{Title: "loss", XLabel: "epoch", Curves: []plot.Curve{{Name: "train", Y: losses}}})
package plot
