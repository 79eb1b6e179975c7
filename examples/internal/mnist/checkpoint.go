package mnist

import (
	"fmt"

	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// CheckpointRoundTrip saves model's parameters, with the optimiser state
// optState (may be nil) and meta, to path in the safetensors format, loads
// them into fresh (a model of the same architecture with other weights)
// and a new Adam over fresh's parameters in one all-or-nothing call, and
// reports whether the two models now predict the same classes; preds
// returns both models' predictions. A difference is an error naming the
// first digit that differs.
func CheckpointRoundTrip(path string, model, fresh nn.Module, optState map[string]*tensor.Tensor,
	meta map[string]string, preds func() (trained, reloaded []int)) (bool, error) {
	var opt, freshOpt optim.Optimizer
	if optState != nil {
		// Training could go on from here exactly where it stopped.
		trained := optim.NewAdam(nn.Values(model.Params()), optim.AdamOptions{})
		if err := trained.LoadState(nn.Names(model.Params()), optState); err != nil {
			return false, fmt.Errorf("checkpoint %s: optimiser state: %w", path, err)
		}
		opt, freshOpt = trained, optim.NewAdam(nn.Values(fresh.Params()), optim.AdamOptions{})
	}
	if err := checkpoint.Save(path, model, checkpoint.SaveOptions{Optimizer: opt, Metadata: meta}); err != nil {
		return false, err
	}
	if _, err := checkpoint.LoadInto(path, fresh, checkpoint.LoadOptions{Optimizer: freshOpt}); err != nil {
		return false, err
	}
	a, b := preds()
	if len(a) != len(b) {
		return false, fmt.Errorf("checkpoint %s: %d predictions from the trained model, %d from the reloaded one", path, len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return false, fmt.Errorf("checkpoint %s: the reloaded model predicts %d for test digit %d, the trained one %d", path, b[i], i, a[i])
		}
	}
	return true, nil
}
