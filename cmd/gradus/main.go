// Command gradus is Gradus's command-line tool.
//
//	gradus inspect FILE.safetensors        names, dtypes, shapes and sizes of a checkpoint's tensors
//	gradus onnx inspect FILE.onnx          inputs, outputs, operators and parameter count of an ONNX model
//	gradus onnx run FILE.onnx IN.npy... -o OUT.npy
//	                                       run an ONNX model on one .npy per graph input,
//	                                       writing its first output
//	gradus plot RUN.jsonl [OUT.png]        loss and metric curves of a train JSON-lines log
//	                                       (default OUT: RUN.png)
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/tensor"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gradus:", err)
		os.Exit(1)
	}
}

const usage = "usage: gradus inspect FILE.safetensors | gradus onnx inspect FILE.onnx | gradus onnx run FILE.onnx INPUT.npy... -o OUT.npy | gradus plot RUN.jsonl [OUT.png]"

func run(args []string, out io.Writer) error {
	switch {
	case len(args) == 2 && args[0] == "inspect":
		return inspect(args[1], out)
	case len(args) == 3 && args[0] == "onnx" && args[1] == "inspect":
		return onnxInspect(args[2], out)
	case len(args) >= 2 && args[0] == "onnx" && args[1] == "run":
		return onnxRun(args[2:], out)
	case (len(args) == 2 || len(args) == 3) && args[0] == "plot":
		dst := strings.TrimSuffix(args[1], filepath.Ext(args[1])) + ".png"
		if len(args) == 3 {
			dst = args[2]
		}
		return plotLog(args[1], dst, out)
	}
	return fmt.Errorf(usage)
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
