package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// ReadLog reads a Loop's JSON Lines log (Config.Log): one Epoch per
// non-empty line. An error names the line that does not parse.
func ReadLog(r io.Reader) ([]Epoch, error) {
	var out []Epoch
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e Epoch
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("train.ReadLog: line %d: %w", line, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("train.ReadLog: %w", err)
	}
	return out, nil
}
