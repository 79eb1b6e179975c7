package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxLogLine bounds one line of a log; a record is some hundred bytes.
const maxLogLine = 16 << 20

// ReadLog parses a JSON-lines log written through Options.Log, one Record
// per line; lines holding only white space are skipped. A line that is not
// a JSON object, that does not read as a Record (a number where a string
// is, a value beyond float64), whose epoch is below 1 or whose step is
// negative, or that is longer than 16 MiB, is an error naming its line
// number; the records of the lines before it are returned with it.
// Memory grows with the lines read, never beyond one line's worth ahead.
func ReadLog(r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), maxLogLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		rec, err := parseLogLine(b)
		if err != nil {
			return out, fmt.Errorf("train: log line %d: %w", line, err)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return out, fmt.Errorf("train: log line %d is longer than %d bytes", line+1, maxLogLine)
		}
		return out, fmt.Errorf("train: reading the log after line %d: %w", line, err)
	}
	return out, nil
}

// parseLogLine reads one non-blank line as a Record.
func parseLogLine(b []byte) (Record, error) {
	if b[0] != '{' {
		return Record{}, fmt.Errorf("not a JSON object: %s", clipLine(b))
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return Record{}, err
	}
	switch {
	case rec.Epoch < 1:
		return Record{}, fmt.Errorf("epoch %d (epochs count from 1, so a record needs one): %s", rec.Epoch, clipLine(b))
	case rec.Step < 0:
		return Record{}, fmt.Errorf("negative step %d", rec.Step)
	}
	return rec, nil
}

// clipLine quotes at most 60 bytes of a line for an error.
func clipLine(b []byte) string {
	if len(b) > 60 {
		return fmt.Sprintf("%q… (%d bytes)", b[:60], len(b))
	}
	return fmt.Sprintf("%q", b)
}
