package tensor

import "testing"

// TestOpFromFrames checks the names the error of an op without a GPU
// kernel gives, on call stacks as runtime reports them.
func TestOpFromFrames(t *testing.T) {
	const m = "github.com/gradus-ml/gradus/"
	for _, c := range []struct {
		name       string
		fns        []string
		op, caller string
	}{
		{"an exported tensor function", []string{m + "tensor.unaryApply[...]", m + "tensor.(*unaryOp).run", m + "tensor.Exp",
			m + "graph.expOp.Forward", m + "graph.Exp", "main.main"}, "Exp", "graph.expOp.Forward"},
		{"the outermost of a run", []string{m + "tensor.storage32", m + "tensor.(*Tensor).Float32s", m + "tensor.Sum",
			"runtime.call", m + "nn.(*Linear).Forward"}, "Sum", "nn.(*Linear).Forward"},
		{"a graph constructor above an unexported path", []string{m + "tensor.storage32", m + "graph.rowsOf[...]",
			m + "graph.lstmRows[...]", m + "graph.lstmCellOp.Forward", m + "graph.apply", m + "graph.LSTMCell",
			m + "autodiff_test.init.func3"}, "graph.LSTMCell", "graph.rowsOf[...]"},
		{"a method of an exported type, from a closure", []string{m + "tensor.storage64", m + "probabilistic.helper",
			m + "probabilistic.(*Gamma).RSample.func1", "testing.tRunner"}, "probabilistic.Gamma.RSample", "probabilistic.helper"},
		{"nothing exported", []string{m + "tensor.storage64", "main.run", "main.main", "runtime.main"}, "this operation", "main.run"},
	} {
		op, caller := opFromFrames(c.fns)
		if op != c.op || caller != c.caller {
			t.Errorf("%s: opFromFrames = %q, %q; want %q, %q", c.name, op, caller, c.op, c.caller)
		}
	}
	for fn, want := range map[string]string{
		m + "graph.LSTMCell":            "graph.LSTMCell",
		m + "graph.(*Graph).Var":        "graph.Graph.Var",
		m + "graph.LSTMCell.func2":      "graph.LSTMCell",
		m + "graph.lstmCellOp.Forward":  "",
		m + "graph.(*Graph).apply":      "",
		m + "probabilistic/logreg.Fit":  "logreg.Fit",
		"example.com/x/y.Model[...].Do": "y.Model.Do",
		"main.main":                     "",
	} {
		if got := exportedFunc(fn); got != want {
			t.Errorf("exportedFunc(%q) = %q, want %q", fn, got, want)
		}
	}
}
