package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/gradus-ml/gradus/nn/onnx"
)

// onnxInspect prints an ONNX file's inputs, outputs, operators and
// parameter count (gradus onnx inspect FILE.onnx).
func onnxInspect(path string, out io.Writer) error {
	s, err := onnx.InspectFile(path)
	if err != nil {
		return err
	}
	domains := make([]string, 0, len(s.Opsets))
	for d := range s.Opsets {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	opsets := make([]string, len(domains))
	for i, d := range domains {
		name := d
		if name == "" {
			name = "ai.onnx"
		}
		opsets[i] = fmt.Sprintf("%s %d", name, s.Opsets[d])
	}
	producer := s.Producer
	if producer == "" {
		producer = "unknown"
	}
	fmt.Fprintf(out, "ONNX IR %d, opset %s, producer %s, graph %q\n", s.IRVersion, strings.Join(opsets, ", "), producer, s.Graph)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, part := range []struct {
		title string
		vs    []onnx.ValueInfo
	}{{"input", s.Inputs}, {"output", s.Outputs}} {
		for _, v := range part.vs {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", part.title, v.Name, v.ElemType, v.ShapeString())
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	ops := make([]string, 0, len(s.Operators))
	for op := range s.Operators {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	counts := make([]string, len(ops))
	for i, op := range ops {
		counts[i] = fmt.Sprintf("%s %d", op, s.Operators[op])
	}
	fmt.Fprintf(out, "%d nodes: %s\n", s.Nodes, strings.Join(counts, ", "))
	fmt.Fprintf(out, "%d parameters in %d initializers\n", s.Parameters, s.Initializers)
	return nil
}
