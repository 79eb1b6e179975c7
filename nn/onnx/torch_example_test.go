package onnx_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/gradus-ml/gradus/nn/onnx"
)

// A GRU that torch.onnx.export wrote: its recurrent weights are ONNX's W,
// R and B under new names, and its Linear head is there twice, once
// transposed for a MatMul. TorchStateDict maps them back to the PyTorch
// module's state dict (gru.json holds the rules, as testdata/zoo.py
// computed them); checkpoint.WriteFile then writes what
// load_state_dict(strict=True) takes.
func ExampleTorchStateDict() {
	m, err := onnx.Open("testdata/gru.onnx")
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := os.ReadFile("testdata/gru.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	var sources map[string]string
	if err := json.Unmarshal(b, &sources); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sources["onnx::GRU_204"], sources["onnx::MatMul_206"])
	sd, err := onnx.TorchStateDict(m, sources)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range slices.Sorted(maps.Keys(sd)) {
		fmt.Println(name, sd[name].Shape())
	}
	// Output:
	// GRU:gru:0:W T:fc.weight
	// fc.bias [2]
	// fc.weight [2 12]
	// gru.bias_hh_l0 [18]
	// gru.bias_hh_l0_reverse [18]
	// gru.bias_ih_l0 [18]
	// gru.bias_ih_l0_reverse [18]
	// gru.weight_hh_l0 [18 6]
	// gru.weight_hh_l0_reverse [18 6]
	// gru.weight_ih_l0 [18 5]
	// gru.weight_ih_l0_reverse [18 5]
}
