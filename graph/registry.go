package graph

import (
	"sort"
	"sync"

	"github.com/gradus-ml/gradus/tensor"
)

// The registry lists every op type once, keyed by its name, so an audit
// (the all-ops gradient table in autodiff's tests) can walk them all,
// wherever they are defined. Ops register a value of their type at init.

var (
	registryMu sync.RWMutex
	registry   = map[string]Op{}
)

// Register records op in the registry under op.Name(). Every op type
// registers one value of itself at init (parameterised ops a
// representative value), so a test can walk the table and check that each
// has a VJP, a JVP and a gradient-check case. Users may register their own
// ops. Register panics with a *tensor.Error if op is nil or its name is
// already taken.
func Register(op Op) {
	if op == nil {
		tensor.Fail("graph.Register", "nil op")
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	name := op.Name()
	if _, dup := registry[name]; dup {
		tensor.Fail("graph.Register", "op %q registered twice", name)
	}
	registry[name] = op
}

// Registered returns the registered ops sorted by name.
func Registered() []Op {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]Op, 0, len(registry))
	for _, op := range registry {
		out = append(out, op)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}
