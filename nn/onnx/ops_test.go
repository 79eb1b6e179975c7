package onnx_test

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gradus-ml/gradus/nn/onnx"
	"github.com/gradus-ml/gradus/nn/onnx/internal/pb"
	"github.com/gradus-ml/gradus/tensor"
)

// input is a named float32 graph input with its value.
type input struct {
	name string
	t    *tensor.Tensor
}

// runGraph builds a model of nodes over float32 inputs and float32
// initializers and returns its outputs on the inputs' values.
func runGraph(t *testing.T, nodes []*pb.NodeProto, inits map[string]*tensor.Tensor, ins []input, outs ...string) []*tensor.Tensor {
	t.Helper()
	g := &pb.GraphProto{Name: proto.String("g"), Node: nodes}
	var xs []*tensor.Tensor
	for _, in := range ins {
		dims := make([]int64, in.t.Dim())
		for i, d := range in.t.Shape() {
			dims[i] = int64(d)
		}
		g.Input = append(g.Input, tensorInfo(in.name, 1, dims...))
		xs = append(xs, in.t)
	}
	for name, v := range inits {
		dims := make([]int64, v.Dim())
		for i, d := range v.Shape() {
			dims[i] = int64(d)
		}
		vals := make([]float32, v.Size())
		for i, x := range v.Values() {
			vals[i] = float32(x)
		}
		g.Initializer = append(g.Initializer, raw(name, 1, f32(vals...), dims...))
	}
	for _, o := range outs {
		g.Output = append(g.Output, tensorInfo(o, 1))
	}
	b, err := proto.Marshal(&pb.ModelProto{IrVersion: proto.Int64(8), Graph: g,
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	ys, err := m.Run(xs...)
	if err != nil {
		t.Fatal(err)
	}
	return ys
}

// strAttr builds a string attribute.
func strAttr(name, v string) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

// intsAttr builds an integer-list attribute.
func intsAttr(name string, v ...int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INTS.Enum(), Ints: v}
}

// close32 fails unless a and b agree to float32 rounding.
func close32(t *testing.T, what string, a, b *tensor.Tensor) {
	t.Helper()
	if d := maxDiff(a, b); !(d < 1e-5) {
		t.Errorf("%s: differ by %g\n%v\n%v", what, d, a, b)
	}
}

// maxDiff is max |a − b| over equal shapes, +Inf otherwise.
func maxDiff(a, b *tensor.Tensor) float64 {
	if tensor.FormatShape(a.Shape()) != tensor.FormatShape(b.Shape()) {
		return math.Inf(1)
	}
	av, bv := a.Values(), b.Values()
	d := 0.0
	for i := range av {
		d = math.Max(d, math.Abs(av[i]-bv[i]))
	}
	return d
}

// ONNX's GRU with linear_before_reset = 0 (which PyTorch never writes)
// applies the reset gate before the recurrent matmul; it is checked
// against the equations computed in plain Go.
func TestGRUResetBeforeLinear(t *testing.T) {
	rng := tensor.NewRNG(5)
	seq, batch, in, hid := 3, 2, 2, 3
	x := rng.Normal(tensor.Float32, 0, 1, seq, batch, in)
	w := rng.Normal(tensor.Float32, 0, 0.5, 1, 3*hid, in)
	r := rng.Normal(tensor.Float32, 0, 0.5, 1, 3*hid, hid)
	b := rng.Normal(tensor.Float32, 0, 0.5, 1, 6*hid)
	node := op("GRU", "gru", []string{"x", "w", "r", "b"}, []string{"y", "hn"}, intAttr("hidden_size", int64(hid)))
	ys := runGraph(t, []*pb.NodeProto{node}, map[string]*tensor.Tensor{"w": w, "r": r, "b": b}, []input{{"x", x}}, "y")
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	h := make([][]float64, batch)
	for i := range h {
		h[i] = make([]float64, hid)
	}
	want := tensor.Zeros(tensor.Float32, seq, 1, batch, hid)
	for s := range seq {
		for n := range batch {
			pre := func(gate, j int, hv []float64) (xw, hr float64) {
				row := gate*hid + j
				xw = b.At(0, row)
				for k := range in {
					xw += x.At(s, n, k) * w.At(0, row, k)
				}
				hr = b.At(0, 3*hid+row)
				for k := range hid {
					hr += hv[k] * r.At(0, row, k)
				}
				return
			}
			z, rr := make([]float64, hid), make([]float64, hid)
			for j := range hid {
				a, c := pre(0, j, h[n])
				z[j] = sig(a + c)
				a, c = pre(1, j, h[n])
				rr[j] = sig(a + c)
			}
			rh := make([]float64, hid)
			for k := range hid {
				rh[k] = rr[k] * h[n][k]
			}
			next := make([]float64, hid)
			for j := range hid {
				a, c := pre(2, j, rh)
				cand := math.Tanh(a + c)
				next[j] = (1-z[j])*cand + z[j]*h[n][j]
				want.SetAt(next[j], s, 0, n, j)
			}
			h[n] = next
		}
	}
	close32(t, "Y", ys[0], want)
}

// direction "reverse" equals the forward LSTM on the time-reversed input,
// and layout 1 (batch first) equals layout 0 on the transposed input.
func TestLSTMReverseAndLayout(t *testing.T) {
	rng := tensor.NewRNG(6)
	x := rng.Normal(tensor.Float32, 0, 1, 4, 2, 3)
	inits := map[string]*tensor.Tensor{
		"w": rng.Normal(tensor.Float32, 0, 0.5, 1, 8, 3), "r": rng.Normal(tensor.Float32, 0, 0.5, 1, 8, 2),
		"b": rng.Normal(tensor.Float32, 0, 0.5, 1, 16)}
	lstm := func(x *tensor.Tensor, attrs ...*pb.AttributeProto) []*tensor.Tensor {
		n := op("LSTM", "lstm", []string{"x", "w", "r", "b"}, []string{"y", "h", "c"}, append(attrs, intAttr("hidden_size", 2))...)
		return runGraph(t, []*pb.NodeProto{n}, inits, []input{{"x", x}}, "y", "h", "c")
	}
	flip := func(v *tensor.Tensor) *tensor.Tensor {
		return tensor.Slice(v, 0, math.MaxInt, math.MinInt, -1).Contiguous()
	}
	fwd := lstm(flip(x))
	rev := lstm(x, strAttr("direction", "reverse"))
	close32(t, "reverse Y", rev[0], flip(fwd[0]))
	close32(t, "reverse Y_h", rev[1], fwd[1])
	close32(t, "reverse Y_c", rev[2], fwd[2])
	plain := lstm(x)
	bf := lstm(tensor.Permute(x, 1, 0, 2).Contiguous(), intAttr("layout", 1))
	close32(t, "layout 1 Y", bf[0], tensor.Permute(plain[0], 2, 0, 1, 3).Contiguous())
	close32(t, "layout 1 Y_h", bf[1], tensor.Permute(plain[1], 1, 0, 2).Contiguous())
}

// Convolution padding given as auto_pad SAME_UPPER or SAME_LOWER, or as
// asymmetric pads, equals an explicit Pad before an unpadded Conv.
func TestConvPadding(t *testing.T) {
	rng := tensor.NewRNG(7)
	x := rng.Normal(tensor.Float32, 0, 1, 1, 2, 5, 6)
	inits := map[string]*tensor.Tensor{"w": rng.Normal(tensor.Float32, 0, 1, 3, 2, 4, 3)}
	conv := func(attrs ...*pb.AttributeProto) *tensor.Tensor {
		return runGraph(t, []*pb.NodeProto{op("Conv", "conv", []string{"x", "w"}, []string{"y"}, attrs...)}, inits, []input{{"x", x}}, "y")[0]
	}
	padded := func(pads ...int64) *tensor.Tensor {
		pad := map[string]*tensor.Tensor{"w": inits["w"]}
		nodes := []*pb.NodeProto{
			op("Constant", "p", nil, []string{"pads"}, &pb.AttributeProto{Name: proto.String("value"), Type: pb.AttributeProto_TENSOR.Enum(),
				T: &pb.TensorProto{DataType: proto.Int32(7), Dims: []int64{8}, Int64Data: pads}}),
			op("Pad", "pad", []string{"x", "pads"}, []string{"xp"}),
			op("Conv", "conv", []string{"xp", "w"}, []string{"y"})}
		return runGraph(t, nodes, pad, []input{{"x", x}}, "y")[0]
	}
	// Height: kernel 4 needs 3 (1 before, 2 after for SAME_UPPER); width: kernel 3 needs 2.
	close32(t, "SAME_UPPER", conv(strAttr("auto_pad", "SAME_UPPER")), padded(0, 0, 1, 1, 0, 0, 2, 1))
	close32(t, "SAME_LOWER", conv(strAttr("auto_pad", "SAME_LOWER")), padded(0, 0, 2, 1, 0, 0, 1, 1))
	close32(t, "pads", conv(intsAttr("pads", 0, 1, 2, 0)), padded(0, 0, 0, 1, 0, 0, 2, 0))
	// Stride 2: 3 outputs per axis need 3 rows (1, 2) and 1 column (0, 1).
	close32(t, "strided SAME_UPPER", conv(strAttr("auto_pad", "SAME_UPPER"), intsAttr("strides", 2, 2)),
		tensor.Slice(tensor.Slice(padded(0, 0, 1, 0, 0, 0, 2, 1), 2, 0, math.MaxInt, 2), 3, 0, math.MaxInt, 2).Contiguous())
}

// ints64 builds a Constant node holding int64 values.
func ints64(out string, v ...int64) *pb.NodeProto {
	return op("Constant", out, nil, []string{out}, &pb.AttributeProto{Name: proto.String("value"), Type: pb.AttributeProto_TENSOR.Enum(),
		T: &pb.TensorProto{DataType: proto.Int32(7), Dims: []int64{int64(len(v))}, Int64Data: v}})
}

// Small operators and the integer arithmetic done on the host give the
// values worked out by hand.
func TestSmallOps(t *testing.T) {
	x := tensor.FromFloat32s([]float32{1.5, -2.5, 3, 0, 4, -1}, 2, 3)
	for _, c := range []struct {
		name  string
		nodes []*pb.NodeProto
		want  *tensor.Tensor
	}{
		{"Dropout", []*pb.NodeProto{op("Dropout", "d", []string{"x"}, []string{"y"})}, x},
		{"Sum", []*pb.NodeProto{op("Sum", "s", []string{"x", "x", "x"}, []string{"y"})}, tensor.MulScalar(x, 3)},
		{"ReduceSumSquare", []*pb.NodeProto{op("ReduceSumSquare", "r", []string{"x"}, []string{"y"}, intsAttr("axes", 1), intAttr("keepdims", 0))},
			tensor.FromFloat32s([]float32{17.5, 17}, 2)},
		{"Split equal", []*pb.NodeProto{op("Split", "s", []string{"x"}, []string{"a", "y", "b"}, intAttr("axis", 1))},
			tensor.FromFloat32s([]float32{-2.5, 4}, 2, 1)},
		{"Cast truncates", []*pb.NodeProto{op("Cast", "i", []string{"x"}, []string{"i"}, intAttr("to", 7)), op("Cast", "f", []string{"i"}, []string{"y"}, intAttr("to", 1))},
			tensor.FromFloat32s([]float32{1, -2, 3, 0, 4, -1}, 2, 3)},
		{"Size", []*pb.NodeProto{op("Size", "n", []string{"x"}, []string{"n"}), op("Cast", "f", []string{"n"}, []string{"y"}, intAttr("to", 1))},
			tensor.Scalar(tensor.Float32, 6)},
		{"integer Div", []*pb.NodeProto{op("Shape", "s", []string{"x"}, []string{"s"}), ints64("two", 2), op("Div", "d", []string{"s", "two"}, []string{"q"}),
			op("Cast", "f", []string{"q"}, []string{"y"}, intAttr("to", 1))}, tensor.FromFloat32s([]float32{1, 1}, 2)},
		{"Tile", []*pb.NodeProto{ints64("reps", 1, 2), op("Tile", "t", []string{"x", "reps"}, []string{"y"})},
			tensor.FromFloat32s([]float32{1.5, -2.5, 3, 1.5, -2.5, 3, 0, 4, -1, 0, 4, -1}, 2, 6)},
		{"Unsqueeze and Squeeze", []*pb.NodeProto{ints64("ax", 0, 3), op("Unsqueeze", "u", []string{"x", "ax"}, []string{"u"}), op("Squeeze", "s", []string{"u"}, []string{"y"})}, x},
		{"Gather scalar index", []*pb.NodeProto{op("Constant", "i", nil, []string{"i"}, intAttr("value_int", -1)), op("Gather", "g", []string{"x", "i"}, []string{"y"}, intAttr("axis", 1))},
			tensor.FromFloat32s([]float32{3, -1}, 2)},
		{"Slice with a negative step", []*pb.NodeProto{ints64("st", -1), ints64("en", math.MinInt64), ints64("ax", 1), ints64("sp", -2),
			op("Slice", "s", []string{"x", "st", "en", "ax", "sp"}, []string{"y"})}, tensor.FromFloat32s([]float32{3, 1.5, -1, 0}, 2, 2)},
		{"Expand", []*pb.NodeProto{ints64("shape", 2, 1, 1), op("Expand", "e", []string{"x", "shape"}, []string{"y"})},
			tensor.Expand(x, 2, 2, 3).Contiguous()},
		{"Gemm with alpha, beta and transA", []*pb.NodeProto{ints64("ax", 0), op("ReduceSum", "c", []string{"x", "ax"}, []string{"c"}),
			op("Gemm", "g", []string{"x", "x", "c"}, []string{"y"}, intAttr("transA", 1),
				&pb.AttributeProto{Name: proto.String("alpha"), Type: pb.AttributeProto_FLOAT.Enum(), F: proto.Float32(0.5)},
				&pb.AttributeProto{Name: proto.String("beta"), Type: pb.AttributeProto_FLOAT.Enum(), F: proto.Float32(-2)})},
			tensor.Add(tensor.MulScalar(tensor.MatMulT(x, x, true, false), 0.5), tensor.MulScalar(tensor.Sum(x, []int{0}, false), -2))},
	} {
		ys := runGraph(t, c.nodes, nil, []input{{"x", x}}, "y")
		close32(t, c.name, ys[0], c.want)
	}
}
