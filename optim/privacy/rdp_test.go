package privacy

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// The RDP equals the divergence integrated from its definition in 40-digit
// arithmetic by testdata/gen.py (312 cases: q from 0.001 to 0.6, σ from 0.7
// to 8, orders from 1.25 to 256, integer and fractional). float64 holds
// log A_α to about 1e-16 absolute, so where the RDP itself is tiny the
// tolerance is that absolute error over α−1; elsewhere 1e-9 relative.
func TestRDPMatchesNumericalIntegration(t *testing.T) {
	var fix struct {
		Cases []struct{ Q, Sigma, Order, RDP float64 }
	}
	b, err := os.ReadFile("testdata/rdp.json")
	if err == nil {
		err = json.Unmarshal(b, &fix)
	}
	if err != nil || len(fix.Cases) < 300 {
		t.Fatalf("fixture testdata/rdp.json: %v (%d cases)", err, len(fix.Cases))
	}
	worst := 0.0
	for _, c := range fix.Cases {
		got, err := RDP(c.Q, c.Sigma, 1, []float64{c.Order})
		if err != nil {
			t.Fatal(err)
		}
		tol := 1e-9*c.RDP + 4e-16/(c.Order-1)
		if d := math.Abs(got[0] - c.RDP); !(d <= tol) {
			t.Errorf("q=%g σ=%g α=%g: RDP %.17g, integral %.17g (diff %.3g > %.3g)", c.Q, c.Sigma, c.Order, got[0], c.RDP, d, tol)
		} else {
			worst = max(worst, d/c.RDP)
		}
	}
	t.Logf("worst relative difference %.3g", worst)
}
