//go:build !amd64 || purego

package optim

import "github.com/gradus-ml/gradus/tensor"

// adamBlocks has no vector implementation here: it updates nothing.
func adamBlocks[T tensor.Float](p, g, m, v []T, k *adamConsts[T]) int { return 0 }
