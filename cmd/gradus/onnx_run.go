package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/nn/onnx"
	"github.com/gradus-ml/gradus/tensor"
)

const onnxRunUsage = "usage: gradus onnx run FILE.onnx INPUT.npy... -o OUT.npy"

// onnxRun runs an ONNX model on .npy inputs, one per graph input in
// order, and writes its first output as a float32 or float64 .npy.
// Float inputs are converted to the model's float type; integer and
// boolean inputs may be any dtype .npy holds.
func onnxRun(args []string, out io.Writer) error {
	var dst string
	var pos []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-o" || a == "--o":
			if i+1 == len(args) {
				return fmt.Errorf("%s: -o needs a file name", onnxRunUsage)
			}
			dst = args[i+1]
			i++
		case strings.HasPrefix(a, "-o="):
			dst = a[3:]
		default:
			pos = append(pos, a)
		}
	}
	if dst == "" || len(pos) < 1 {
		return fmt.Errorf("%s", onnxRunUsage)
	}
	m, err := onnx.Open(pos[0])
	if err != nil {
		return err
	}
	ins := m.Inputs()
	if len(pos)-1 != len(ins) {
		names := make([]string, len(ins))
		for i, vi := range ins {
			names[i] = vi.Name
		}
		return fmt.Errorf("%s takes %d inputs (%s), got %d .npy files", pos[0], len(ins), strings.Join(names, ", "), len(pos)-1)
	}
	xs := make([]*tensor.Tensor, len(ins))
	for i, vi := range ins {
		x, err := data.LoadNPY(pos[i+1])
		if err != nil {
			return err
		}
		switch vi.ElemType {
		case "float64":
			x = x.Cast(tensor.Float64)
		case "float32", "float16", "bfloat16":
			x = x.Cast(tensor.Float32)
		}
		xs[i] = x
	}
	ys, err := m.Run(xs...)
	if err != nil {
		return err
	}
	if err := writeNPY(dst, ys[0]); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s: %s %s %s\n", dst, m.Outputs()[0].Name, ys[0].DType(), tensor.FormatShape(ys[0].Shape()))
	return nil
}

// writeNPY writes t as a NumPy .npy file (format 1.0, little-endian
// float32 '<f4' or float64 '<f8', C order).
func writeNPY(path string, t *tensor.Tensor) (err error) {
	descr, width := "<f4", 4
	if t.DType() == tensor.Float64 {
		descr, width = "<f8", 8
	}
	shape := ""
	for _, d := range t.Shape() {
		shape += fmt.Sprintf("%d, ", d)
	}
	if t.Dim() > 1 {
		shape = strings.TrimSuffix(shape, " ")
		shape = strings.TrimSuffix(shape, ",")
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, strings.TrimSuffix(shape, " "))
	// Pad with spaces and a newline so that the data starts at a multiple of 64.
	header += strings.Repeat(" ", 63-(10+len(header))%64) + "\n"
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := bufio.NewWriter(f)
	w.WriteString("\x93NUMPY\x01\x00")
	binary.Write(w, binary.LittleEndian, uint16(len(header)))
	w.WriteString(header)
	b := make([]byte, width)
	for _, v := range t.Values() {
		if width == 4 {
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v)))
		} else {
			binary.LittleEndian.PutUint64(b, math.Float64bits(v))
		}
		w.Write(b)
	}
	return w.Flush()
}
