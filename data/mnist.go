package data

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gradus-ml/gradus/tensor"
)

// MNIST returns a split of the embedded 10,000-digit MNIST subset: "train"
// (8,000 digits) or "test" (2,000). x is a float32 tensor (n, 784) of
// pixels scaled to [0, 1] (byte/255), one row-major 28×28 image per row,
// and labels holds the digits 0..9.
func MNIST(split string) (x *tensor.Tensor, labels []int, err error) {
	prefix, err := mnistPrefix(split)
	if err != nil {
		return nil, nil, err
	}
	open := func(kind string) (io.ReadCloser, string, error) {
		name := "mnist10k/" + prefix + "-" + kind + ".gz"
		f, err := Open(name)
		return f, name, err
	}
	return loadMNIST(open)
}

// MNISTFromDir reads a split ("train" or "test") of MNIST in IDX format from
// the directory dir, as the files are distributed: train-images-idx3-ubyte
// and train-labels-idx1-ubyte, t10k-images-idx3-ubyte and
// t10k-labels-idx1-ubyte (for "test", a "test-" prefix is accepted too),
// each gzipped (.gz) or not, with "-idx3-ubyte" or ".idx3-ubyte". The
// result is laid out as MNIST's. An error names the files it looked for,
// or the file that is corrupt.
func MNISTFromDir(dir, split string) (x *tensor.Tensor, labels []int, err error) {
	prefix, err := mnistPrefix(split)
	if err != nil {
		return nil, nil, err
	}
	prefixes := []string{prefix}
	if split == "test" {
		prefixes = []string{"t10k", "test"}
	}
	open := func(kind string) (io.ReadCloser, string, error) {
		var tried []string
		for _, p := range prefixes {
			for _, sep := range []string{"-", "."} {
				for _, ext := range []string{"", ".gz"} {
					name := filepath.Join(dir, p+"-"+strings.Replace(kind, "-", sep, 1)+ext)
					f, err := os.Open(name)
					if err == nil {
						return f, name, nil
					}
					if !errors.Is(err, fs.ErrNotExist) {
						return nil, name, fmt.Errorf("data: %w", err)
					}
					tried = append(tried, filepath.Base(name))
				}
			}
		}
		return nil, "", fmt.Errorf("data: no MNIST %s file in %s (looked for %s)", split, dir, strings.Join(tried, ", "))
	}
	return loadMNIST(open)
}

// mnistPrefix maps a split to the embedded files' prefix.
func mnistPrefix(split string) (string, error) {
	switch split {
	case "train":
		return "train", nil
	case "test":
		return "test", nil
	}
	return "", fmt.Errorf("data: MNIST split %q: want \"train\" or \"test\"", split)
}

// loadMNIST reads the images and labels that open finds and checks that
// they agree: 28×28 images, as many labels as images, labels 0..9.
func loadMNIST(open func(kind string) (io.ReadCloser, string, error)) (*tensor.Tensor, []int, error) {
	f, imgName, err := open("images-idx3-ubyte")
	if err != nil {
		return nil, nil, err
	}
	n, rows, cols, pix, err := ReadIDXImages(f, imgName)
	f.Close()
	if err != nil {
		return nil, nil, err
	}
	if rows != 28 || cols != 28 {
		return nil, nil, fmt.Errorf("data: %s: images are %d×%d, MNIST's are 28×28", imgName, rows, cols)
	}
	f, lblName, err := open("labels-idx1-ubyte")
	if err != nil {
		return nil, nil, err
	}
	labels, err := ReadIDXLabels(f, lblName)
	f.Close()
	if err != nil {
		return nil, nil, err
	}
	if len(labels) != n {
		return nil, nil, fmt.Errorf("data: %s has %d labels but %s has %d images", lblName, len(labels), imgName, n)
	}
	for i, l := range labels {
		if l > 9 {
			return nil, nil, fmt.Errorf("data: %s: label %d is %d, want 0..9", lblName, i, l)
		}
	}
	x := make([]float32, len(pix))
	for i, p := range pix {
		x[i] = float32(p) / 255
	}
	return tensor.FromFloat32s(x, n, rows*cols), labels, nil
}
