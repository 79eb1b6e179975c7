package tensor

import (
	"strconv"
	"strings"
)

// FormatShape formats a shape the NumPy way: "(2, 3)", "(3,)" for one
// dimension and "()" for a scalar. Error messages in tensor and in the
// packages built on it use it so shapes read the same everywhere.
func FormatShape(shape []int) string {
	if len(shape) == 1 {
		return "(" + strconv.Itoa(shape[0]) + ",)"
	}
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(d))
	}
	b.WriteByte(')')
	return b.String()
}
