package train

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each kind of corrupt line is an error naming its line, returned with
// the records before it; no error quotes more than a few dozen bytes of a
// line.
func TestReadLogRejects(t *testing.T) {
	good := `{"epoch":1,"step":10,"lr":0.1,"train_loss":0.5,"seconds":1}` + "\n"
	huge := strings.Repeat("x", 1<<20)
	for _, c := range []struct {
		name, log, want string
	}{
		{"a null line", good + "null\n", `log line 2: not a JSON object: "null"`},
		{"an array line", good + "[1]\n", "log line 2: not a JSON object"},
		{"a number line", good + "3\n", "log line 2: not a JSON object"},
		{"a line cut short by a crash", good + `{"epoch":2,"step":20,"lr`, "log line 2: unexpected end of JSON input"},
		{"a number cut short by a crash", good + `{"epoch":2,"step":20,"lr":0.`, "log line 2: invalid character"},
		{"two records on one line", good + `{"epoch":2} {"epoch":3}` + "\n", "log line 2: invalid character '{' after top-level value"},
		{"a record without an epoch", good + `{"step":3}` + "\n", "log line 2: epoch 0 (epochs count from 1"},
		{"an epoch of 0", good + `{"epoch":0}` + "\n", "log line 2: epoch 0"},
		{"a negative step", good + `{"epoch":2,"step":-1}` + "\n", "log line 2: negative step -1"},
		{"a fractional epoch", good + `{"epoch":1.5}` + "\n", "log line 2: json: cannot unmarshal number 1.5"},
		{"a value beyond float64", good + `{"epoch":2,"lr":1e999}` + "\n", "log line 2: json: cannot unmarshal number 1e999"},
		{"a word for a number", good + `{"epoch":2,"train_loss":"lots"}` + "\n", `log line 2: "lots" is not a number`},
		{"a huge word for a number", good + `{"epoch":2,"train_loss":"` + huge + `"}` + "\n", `"` + strings.Repeat("x", 40) + `…" is not a number`},
		{"metrics that are not an object", good + `{"epoch":2,"metrics":[1]}` + "\n", "log line 2: json: cannot unmarshal array"},
		{"a line beyond 16 MiB", good + strings.Repeat(" ", 17<<20) + "\n", "log line 2 is longer than 16777216 bytes"},
		{"a huge garbage line", good + huge + "\n", "log line 2: not a JSON object: \"xxx"},
	} {
		recs, err := ReadLog(strings.NewReader(c.log))
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.want, c.name)
			assert.Less(t, len(err.Error()), 250, c.name)
		}
		if assert.Len(t, recs, 1, c.name) {
			assert.Equal(t, 10, recs[0].Step, c.name)
		}
	}
}

// Blank and white-space lines, CRLF line ends, a last line without a
// newline and fields a later version may add are all read.
func TestReadLogAccepts(t *testing.T) {
	for _, c := range []struct {
		name, log string
		steps     []int
	}{
		{"blank lines", "\n" + `{"epoch":1,"step":1}` + "\n\n" + `{"epoch":2,"step":2}` + "\n\n", []int{1, 2}},
		{"white-space lines", " \t\n" + `{"epoch":1,"step":1}` + "\n  \n", []int{1}},
		{"CRLF line ends", `{"epoch":1,"step":1}` + "\r\n" + `{"epoch":2,"step":2}` + "\r\n", []int{1, 2}},
		{"no final newline", `{"epoch":1,"step":7}`, []int{7}},
		{"an unknown field", `{"epoch":1,"step":3,"gpu":"h200"}` + "\n", []int{3}},
		{"an empty log", "", nil},
	} {
		recs, err := ReadLog(strings.NewReader(c.log))
		if assert.NoError(t, err, c.name) {
			var steps []int
			for _, r := range recs {
				steps = append(steps, r.Step)
			}
			assert.Equal(t, c.steps, steps, c.name)
		}
	}
}

// sameRecord compares records with NaN equal to NaN and a nil Metrics
// equal to an empty one.
func sameRecord(a, b Record) bool {
	same := func(x, y float64) bool { return x == y || (math.IsNaN(x) && math.IsNaN(y)) }
	return a.Epoch == b.Epoch && a.Step == b.Step && a.Best == b.Best &&
		same(a.LR, b.LR) && same(a.TrainLoss, b.TrainLoss) && same(a.Seconds, b.Seconds) &&
		maps.EqualFunc(a.Metrics, b.Metrics, same)
}

// FuzzReadLog: no input panics; every accepted record has an epoch of at
// least 1 and a step of at least 0, there are no more records than lines,
// and writing the records as Options.Log does and reading them again gives
// the same records, non-finite values included. The seed corpus holds
// each class of TestReadLogRejects and TestReadLogAccepts and the
// non-finite records.
func FuzzReadLog(f *testing.F) {
	good := `{"epoch":1,"step":10,"lr":0.1,"train_loss":0.5,"metrics":{"val_loss":0.25},"seconds":1.5,"best":true}` + "\n"
	for _, seed := range []string{
		good,
		`{"epoch":2,"step":20,"lr":0.1,"train_loss":"NaN","metrics":{"val_loss":"+Inf","val_min":"-Inf"},"seconds":2}` + "\n",
		`{"epoch":1,"lr":"Inf","train_loss":-0}` + "\n",
		good + "null\n", good + "[1]\n", good + "3\n",
		good + `{"epoch":2,"step":20,"lr":0.`,
		good + `{"epoch":2} {"epoch":3}` + "\n",
		good + `{"step":3}` + "\n", good + `{"epoch":0}` + "\n", good + `{"epoch":2,"step":-1}` + "\n",
		good + `{"epoch":1.5}` + "\n", good + `{"epoch":2,"lr":1e999}` + "\n",
		good + `{"epoch":2,"train_loss":"lots"}` + "\n",
		good + `{"epoch":2,"train_loss":"` + strings.Repeat("x", 200) + `"}` + "\n",
		good + `{"epoch":2,"metrics":[1]}` + "\n",
		"\n" + good + "\n\n", " \t\n" + good + "  \n",
		strings.ReplaceAll(good, "\n", "\r\n"),
		strings.TrimSuffix(good, "\n"),
		`{"epoch":1,"step":3,"gpu":"h200"}` + "\n",
		`{"epoch":1,"metrics":{}}` + "\n",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		recs, err := ReadLog(strings.NewReader(s))
		if err != nil {
			if !strings.Contains(err.Error(), "train: ") || len(err.Error()) > 400 {
				t.Fatalf("unclear error: %.400s", err)
			}
			return
		}
		if len(recs) > strings.Count(s, "\n")+1 {
			t.Fatalf("%d records from %d lines", len(recs), strings.Count(s, "\n")+1)
		}
		var buf bytes.Buffer
		for _, r := range recs {
			if r.Epoch < 1 || r.Step < 0 {
				t.Fatalf("accepted epoch %d, step %d", r.Epoch, r.Step)
			}
			b, err := json.Marshal(r)
			require.NoError(t, err)
			buf.Write(append(b, '\n'))
		}
		again, err := ReadLog(&buf)
		require.NoError(t, err)
		require.Len(t, again, len(recs))
		for i := range recs {
			if !sameRecord(recs[i], again[i]) {
				t.Fatalf("record %d: %+v read back as %+v", i, recs[i], again[i])
			}
		}
	})
}
