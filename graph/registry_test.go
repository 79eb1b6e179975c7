package graph_test

import (
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
)

// Registering a nil op, or a second op under a taken name, is misuse: a
// *tensor.Error naming graph.Register and the caller's line.
func TestRegisterMisuse(t *testing.T) {
	taken := graph.Registered()[0]
	for _, c := range []struct {
		name, site string
		f          func()
		want       string
	}{
		{"nil op", numtest.Here(), func() { graph.Register(nil) }, "nil op"},
		{"name taken", numtest.Here(), func() { graph.Register(taken) }, "registered twice"},
	} {
		t.Run(c.name, func(t *testing.T) { numtest.Misuse(t, "graph.Register", c.site, c.f, c.want) })
	}
}
