package train

import (
	"encoding/json"
	"fmt"
	"math"
)

// logFloat is a float64 whose JSON form keeps non-finite values: NaN, +Inf
// and −Inf are written as the strings "NaN", "+Inf" and "-Inf" (JSON has
// no numbers for them), so that a diverging epoch is logged, not dropped.
type logFloat float64

// MarshalJSON writes finite values as numbers and the others as strings.
func (f logFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *logFloat) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "NaN":
			*f = logFloat(math.NaN())
		case "+Inf", "Inf":
			*f = logFloat(math.Inf(1))
		case "-Inf":
			*f = logFloat(math.Inf(-1))
		default:
			if len(s) > 40 { // a corrupt log can hold a string of megabytes
				s = s[:40] + "…"
			}
			return fmt.Errorf("%q is not a number (want a number, \"NaN\", \"+Inf\" or \"-Inf\")", s)
		}
		return nil
	}
	return json.Unmarshal(b, (*float64)(f))
}

// recordJSON is Record's JSON form.
type recordJSON struct {
	Epoch     int                 `json:"epoch"`
	Step      int                 `json:"step"`
	LR        logFloat            `json:"lr"`
	TrainLoss logFloat            `json:"train_loss"`
	Metrics   map[string]logFloat `json:"metrics,omitempty"`
	Seconds   logFloat            `json:"seconds"`
	Best      bool                `json:"best,omitempty"`
}

// MarshalJSON writes the record as one JSON object, non-finite values as
// the strings "NaN", "+Inf" and "-Inf".
func (r Record) MarshalJSON() ([]byte, error) {
	j := recordJSON{Epoch: r.Epoch, Step: r.Step, LR: logFloat(r.LR), TrainLoss: logFloat(r.TrainLoss), Seconds: logFloat(r.Seconds), Best: r.Best}
	if r.Metrics != nil {
		j.Metrics = make(map[string]logFloat, len(r.Metrics))
		for k, v := range r.Metrics {
			j.Metrics[k] = logFloat(v)
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Record) UnmarshalJSON(b []byte) error {
	var j recordJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = Record{Epoch: j.Epoch, Step: j.Step, LR: float64(j.LR), TrainLoss: float64(j.TrainLoss), Seconds: float64(j.Seconds), Best: j.Best}
	if j.Metrics != nil {
		r.Metrics = make(map[string]float64, len(j.Metrics))
		for k, v := range j.Metrics {
			r.Metrics[k] = float64(v)
		}
	}
	return nil
}
