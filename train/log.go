package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// ReadLog parses a JSON-lines log written through Options.Log, one Record
// per line; blank lines are skipped. A line that is not a record is an
// error naming its line number.
func ReadLog(r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return out, fmt.Errorf("train: log line %d: %w", line, err)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("train: reading the log: %w", err)
	}
	return out, nil
}
