package privacy

import "github.com/gradus-ml/gradus/tensor"

// fail panics with a *tensor.Error for misuse of op.
func fail(op string, err error) { tensor.Fail(op, "%v", err) }
