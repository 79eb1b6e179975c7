package train

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Off a terminal, Progress writes one line per epoch and nothing per step.
func TestProgressPlain(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf)
	p.Printf("start")
	p.StartEpoch("epoch 1/2", 3)
	p.Step(1)
	p.Step(2)
	p.EndEpoch("loss %.1f", 1.5)
	assert.Equal(t, "start\nepoch 1/2 loss 1.5\n", buf.String())
	NewProgress(nil).Printf("discarded") // must not panic
}
