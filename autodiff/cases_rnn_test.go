package autodiff_test

import (
	"github.com/gradus-ml/gradus/graph"
)

// The fused recurrent cells and their VJP ops, on 2 rows of H = 3 and on
// one unbatched row (the cells take any leading axes).
func init() {
	lstm := func(xs []*graph.Node) *graph.Node {
		h, c := graph.LSTMCell(xs[0], xs[1], xs[2])
		return graph.Concat(-1, h, c)
	}
	addCase("lstm_cell", opCase{name: "rows", inputs: ewNormal(1, []int{2, 12}, []int{2, 12}, []int{2, 3}), f: lstm})
	addCase("lstm_cell", opCase{name: "one row", inputs: ewNormal(1, []int{8}, []int{8}, []int{2}), f: lstm})
	addCase("lstm_cell_grad", opCase{name: "rows", inputs: ewNormal(1, []int{2, 6}, []int{2, 12}, []int{2, 12}, []int{2, 3}),
		f: func(xs []*graph.Node) *graph.Node { return graph.LSTMCellGrad(xs[0], xs[1], xs[2], xs[3]) }})
	addCase("lstm_cell_grad", opCase{name: "batch axes", inputs: ewNormal(1, []int{2, 1, 4}, []int{2, 1, 8}, []int{2, 1, 8}, []int{2, 1, 2}),
		f: func(xs []*graph.Node) *graph.Node { return graph.LSTMCellGrad(xs[0], xs[1], xs[2], xs[3]) }})
	addCase("gru_cell", opCase{name: "rows", inputs: ewNormal(1, []int{2, 9}, []int{2, 9}, []int{2, 3}), f: ewTernary(graph.GRUCell)})
	addCase("gru_cell", opCase{name: "one row", inputs: ewNormal(1, []int{6}, []int{6}, []int{2}), f: ewTernary(graph.GRUCell)})
	addCase("gru_cell_grad", opCase{name: "rows", inputs: ewNormal(1, []int{2, 3}, []int{2, 9}, []int{2, 9}, []int{2, 3}),
		f: func(xs []*graph.Node) *graph.Node { return graph.GRUCellGrad(xs[0], xs[1], xs[2], xs[3]) }})
	addCase("gru_cell_grad", opCase{name: "batch axes", inputs: ewNormal(1, []int{2, 1, 2}, []int{2, 1, 6}, []int{2, 1, 6}, []int{2, 1, 2}),
		f: func(xs []*graph.Node) *graph.Node { return graph.GRUCellGrad(xs[0], xs[1], xs[2], xs[3]) }})
}
