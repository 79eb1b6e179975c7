// Package data loads the small real data sets that ship inside Gradus
// (embedded with go:embed, so examples run with no download) and reads
// the same formats from files a user names.
//
// Embedded sets: the scikit-learn toy sets "sklearn/iris.csv",
// "sklearn/digits.csv", "sklearn/breast_cancer.csv", "sklearn/diabetes.csv",
// "sklearn/diabetes_raw.csv", Mauna Loa "co2.csv", and the MNIST 10k subset
// under "mnist10k/". files/SOURCES.md gives their sources and licences.
//
// MNIST and MNISTFromDir load digits (IDX files, read by ReadIDXImages and
// ReadIDXLabels); Batcher, Gatherer and GatherLabels deal shuffled
// mini-batches without allocating per batch; TrainTestSplit and
// Standardise prepare tabular data:
//
//	x, labels, err := data.MNIST("train") // (8000, 784) float32 in [0, 1]
//	b := data.NewBatcher(len(labels), 128, data.BatchOptions{Seed: 1})
//	rows := data.NewGatherer(x)
//	for idx := range b.Epoch() {
//		xb := rows.Gather(idx) // (len(idx), 784), a reused buffer
//		...
//	}
//
// Loader deals a Dataset in batches for package train. Class labels are
// []int everywhere (TensorDataset.Labels, Batch.Labels), as losses,
// metrics and every classifier take them; regression targets are a tensor
// (TensorDataset.Targets, Batch.Targets) gathered row by row like the
// features, so a target may have several outputs:
//
//	loader := data.NewLoader(data.TensorDataset{X: x, Labels: labels}, data.LoaderOptions{BatchSize: 32, Seed: 1})
//	for b := range loader.Epoch(epoch) {
//		loss := losses.CrossEntropy(model.Forward(g.Const(b.X)), b.Labels)
//		...
//	}
package data

import (
	"bufio"
	"embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gradus-ml/gradus/tensor"
)

//go:embed files
var files embed.FS

// Open opens an embedded file by its name, e.g. "sklearn/iris.csv".
func Open(name string) (fs.File, error) {
	f, err := files.Open("files/" + name)
	if err != nil {
		return nil, fmt.Errorf("data: no embedded file %q", name)
	}
	return f, nil
}

// Table is a numeric table read from a CSV file with a header row.
type Table struct {
	Name    string      // the file it was read from, for errors
	Columns []string    // column names from the header
	Rows    [][]float64 // one slice per data row, len(Columns) values each
}

// Select returns the named columns, in the order given, as an (n, k)
// float64 tensor. An error names the file, its header line and every
// missing column.
func (t *Table) Select(names ...string) (*tensor.Tensor, error) {
	idx := make([]int, len(names))
	var missing []string
	for i, n := range names {
		if idx[i] = t.Column(n); idx[i] < 0 {
			missing = append(missing, strconv.Quote(n))
		}
	}
	if len(missing) > 0 || len(names) == 0 {
		return nil, fmt.Errorf("data: %s:1: header has no column %s (have %v)", t.Name, strings.Join(missing, ", "), t.Columns)
	}
	flat := make([]float64, 0, len(t.Rows)*len(names))
	for _, r := range t.Rows {
		for _, j := range idx {
			flat = append(flat, r[j])
		}
	}
	return tensor.FromFloat64s(flat, len(t.Rows), len(names)), nil
}

// Column returns the index of the named column, or -1.
func (t *Table) Column(name string) int {
	for i, c := range t.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// Classes loads an embedded (or on-disk) CSV of features and an integer
// class column named target, such as "sklearn/iris.csv": the features as
// an (n, d) float64 tensor and the classes.
func Classes(name, target string) (*tensor.Tensor, []int, error) {
	tab, err := LoadCSV(name)
	if err != nil {
		return nil, nil, err
	}
	rows, y, err := tab.Split(target)
	if err != nil {
		return nil, nil, err
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("data: %s has no rows", name)
	}
	d := len(rows[0])
	flat := make([]float64, 0, len(rows)*d)
	labels := make([]int, len(y))
	for i, r := range rows {
		flat = append(flat, r...)
		labels[i] = int(y[i])
		if float64(labels[i]) != y[i] {
			return nil, nil, fmt.Errorf("data: %s row %d: class %v is not an integer", name, i+1, y[i])
		}
	}
	return tensor.FromFloat64s(flat, len(rows), d), labels, nil
}

// Split returns the rows' values without the named column (features) and
// the named column itself (target). It errors if the column is missing.
func (t *Table) Split(target string) (x [][]float64, y []float64, err error) {
	j := t.Column(target)
	if j < 0 {
		return nil, nil, fmt.Errorf("data: %s:1: header has no column %q (have %v)", t.Name, target, t.Columns)
	}
	x = make([][]float64, len(t.Rows))
	y = make([]float64, len(t.Rows))
	for i, r := range t.Rows {
		row := make([]float64, 0, len(r)-1)
		row = append(row, r[:j]...)
		x[i] = append(row, r[j+1:]...)
		y[i] = r[j]
	}
	return x, y, nil
}

// ReadCSV reads a numeric CSV with a header row. name is used in errors.
// Every field must parse as a finite float: an error names the file, line
// and column (1-based number and header name) of the first one that does
// not, NaN and ±Inf included (a missing value must not pass as a number),
// as well as values beyond float64's range. A row with the wrong number of
// fields, an empty input and a header that names a column twice are
// errors too. A UTF-8 byte-order mark before the header is dropped. Errors
// quote at most 40 characters of a field.
func ReadCSV(r io.Reader, name string) (*Table, error) {
	br := bufio.NewReader(r)
	if bom, _ := br.Peek(3); string(bom) == "\ufeff" {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	header, err := cr.Read()
	switch {
	case err == io.EOF:
		return nil, fmt.Errorf("data: %s: empty file: no header row", name)
	case err != nil:
		return nil, fmt.Errorf("data: %s: reading header: %w", name, err)
	}
	header = slices.Clone(header)
	seen := make(map[string]int, len(header))
	for j, c := range header {
		if k, ok := seen[c]; ok {
			return nil, fmt.Errorf("data: %s:1: columns %d and %d are both named %q", name, k+1, j+1, clip(c))
		}
		seen[c] = j
	}
	t := &Table{Name: name, Columns: header}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("data: %s: %w", name, err)
		}
		row := make([]float64, len(rec))
		for j, s := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
				row[j] = v
				continue
			}
			line, _ := cr.FieldPos(j)
			what := "is not a number"
			switch {
			case errors.Is(err, strconv.ErrRange):
				what = "is beyond float64's range"
			case err == nil:
				what = "is not a finite number"
			}
			return nil, fmt.Errorf("data: %s:%d: column %d (%q): %q %s", name, line, j+1, clip(header[j]), clip(s), what)
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// clip shortens s for an error message: a corrupt file can hold a field
// of megabytes.
func clip(s string) string {
	const most = 40 // runes
	n := 0
	for i := range s {
		if n == most {
			return s[:i] + fmt.Sprintf("… (%d bytes)", len(s))
		}
		n++
	}
	return s
}

// LoadCSV reads an embedded CSV by name (e.g. "sklearn/iris.csv") or, if
// no such embedded file exists, a CSV file at that path.
func LoadCSV(name string) (*Table, error) {
	var r io.ReadCloser
	if f, err := Open(name); err == nil {
		r = f
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("data: %q is neither an embedded set nor a readable file: %w", name, err)
		}
		r = f
	}
	defer r.Close()
	return ReadCSV(r, name)
}
