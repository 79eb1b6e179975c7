package data

import (
	"bytes"
	"encoding/csv"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each kind of malformed CSV is an error naming the file and, where one is
// concerned, the line and column; no error quotes more than 40 characters
// of a field.
func TestReadCSVRejects(t *testing.T) {
	huge := strings.Repeat("h", 1<<20)
	for _, c := range []struct {
		name, csv, want string
	}{
		{"an empty file", "", "bad.csv: empty file: no header row"},
		{"only a byte-order mark", "\ufeff", "bad.csv: empty file: no header row"},
		{"a column named twice", "a,b,a\n1,2,3\n", `bad.csv:1: columns 1 and 3 are both named "a"`},
		{"a huge column named twice", huge + "," + huge + "\n1,2\n", "columns 1 and 2 are both named \"" + strings.Repeat("h", 40) + "… (1048576 bytes)\""},
		{"a value beyond float64", "a,b\n1,1e400\n", `bad.csv:2: column 2 ("b"): "1e400" is beyond float64's range`},
		{"a NaN cell", "a\nNaN\n", `bad.csv:2: column 1 ("a"): "NaN" is not a finite number`},
		{"an infinite cell", "a\n-Inf\n", `"-Inf" is not a finite number`},
		{"an empty cell", "a,b\n1,\n", `bad.csv:2: column 2 ("b"): "" is not a number`},
		{"a huge cell", "a\n" + huge + "\n", strings.Repeat("h", 40) + "… (1048576 bytes)\" is not a number"},
		{"a short row", "a,b\n1,2\n3\n", "record on line 3: wrong number of fields"},
		{"a long row", "a,b\n1,2,3\n", "record on line 2: wrong number of fields"},
		{"a bare quote", "a,b\n1,2\"\n", `bare " in non-quoted-field`},
		{"an unterminated quote", "a,b\n1,\"2\n", `extraneous or missing " in quoted-field`},
		{"a bad cell after a multi-line field", "a,b\n\"1\n\",2\n3,x\n", `bad.csv:4: column 2 ("b"): "x" is not a number`},
	} {
		_, err := ReadCSV(strings.NewReader(c.csv), "bad.csv")
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), "bad.csv", c.name)
			assert.Contains(t, err.Error(), c.want, c.name)
			assert.Less(t, len(err.Error()), 300, c.name)
		}
	}
}

// Valid variations: a byte-order mark before a quoted header, CRLF line
// ends, blank lines, spaces around numbers, hexadecimal floats, a header
// without rows.
func TestReadCSVAccepts(t *testing.T) {
	for _, c := range []struct {
		name, csv string
		columns   []string
		rows      [][]float64
	}{
		{"a BOM before a quoted header", "\ufeff\"a,1\",b\n1,2\n", []string{"a,1", "b"}, [][]float64{{1, 2}}},
		{"CRLF line ends", "a,b\r\n1,2\r\n3,4\r\n", []string{"a", "b"}, [][]float64{{1, 2}, {3, 4}}},
		{"blank lines", "a\n\n1\n\n2\n", []string{"a"}, [][]float64{{1}, {2}}},
		{"spaces around numbers", "a,b\n 1 , -2.5e3\n", []string{"a", "b"}, [][]float64{{1, -2500}}},
		{"a hexadecimal float", "a\n0x1p-2\n", []string{"a"}, [][]float64{{0.25}}},
		{"a header without rows", "a,b\n", []string{"a", "b"}, nil},
	} {
		tab, err := ReadCSV(strings.NewReader(c.csv), "ok.csv")
		if assert.NoError(t, err, c.name) {
			assert.Equal(t, c.columns, tab.Columns, c.name)
			assert.Equal(t, c.rows, tab.Rows, c.name)
		}
	}
}

// writeCSV writes a table as ReadCSV reads it, after a byte-order mark (so
// a first column name that itself starts with one survives), values in
// the shortest form that reads back exactly. It is the writer FuzzReadCSV
// round-trips through.
func writeCSV(tab *Table) []byte {
	var buf bytes.Buffer
	buf.WriteString("\ufeff")
	w := csv.NewWriter(&buf)
	if len(tab.Columns) == 1 && tab.Columns[0] == "" {
		buf.WriteString("\"\"\n") // csv.Writer would write a blank line, which readers skip
	} else {
		w.Write(tab.Columns)
	}
	rec := make([]string, len(tab.Columns))
	for _, r := range tab.Rows {
		for j, v := range r {
			rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		w.Write(rec)
	}
	w.Flush()
	return buf.Bytes()
}

// FuzzReadCSV: no input panics; an accepted table has as many values in
// every row as it has columns, all finite, and reads back the same after
// writeCSV. The seed corpus holds each class of TestReadCSVRejects and
// TestReadCSVAccepts.
func FuzzReadCSV(f *testing.F) {
	for _, seed := range []string{
		"a,b\n1,2\n3,4\n",
		"\ufeff\"a,1\",b\n1,2\n",
		"\ufeff",
		"",
		"a,b,a\n1,2,3\n",
		"a,b\n1,1e400\n",
		"a\nNaN\n", "a\n-Inf\n", "a\n+Infinity\n",
		"a,b\n1,\n",
		"a\n" + strings.Repeat("9", 400) + "\n",
		"a\n" + strings.Repeat("h", 100) + "\n",
		"a,b\n1,2\n3\n",
		"a,b\n1,2\"\n",
		"a,b\n1,\"2\n",
		"a,b\n\"1\n\",2\n3,x\n",
		"a,b\r\n1,2\r\n",
		"a\n\n1\n\n",
		"a\n0x1p-2\n",
		"a\n-0\n",
		"\"\"\n1\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := ReadCSV(strings.NewReader(s), "fuzz.csv")
		if err != nil {
			checkNamed(t, err, "fuzz.csv")
			if len(err.Error()) > 600 {
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
			return
		}
		for i, r := range tab.Rows {
			if len(r) != len(tab.Columns) {
				t.Fatalf("row %d has %d values for %d columns", i, len(r), len(tab.Columns))
			}
			for _, v := range r {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("row %d holds %v", i, v)
				}
			}
		}
		again, err := ReadCSV(bytes.NewReader(writeCSV(tab)), "again.csv")
		require.NoError(t, err)
		if !slices.Equal(tab.Columns, again.Columns) || len(tab.Rows) != len(again.Rows) {
			t.Fatalf("columns %q (%d rows) read back as %q (%d rows)", tab.Columns, len(tab.Rows), again.Columns, len(again.Rows))
		}
		for i, r := range tab.Rows {
			for j, v := range r {
				if math.Float64bits(v) != math.Float64bits(again.Rows[i][j]) {
					t.Fatalf("row %d column %d: %v read back as %v", i, j, v, again.Rows[i][j])
				}
			}
		}
	})
}
