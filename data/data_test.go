package data

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

func TestEmbeddedCSVShapes(t *testing.T) {
	for _, c := range []struct {
		name       string
		rows, cols int
	}{
		{"sklearn/iris.csv", 150, 5},
		{"sklearn/breast_cancer.csv", 569, 31},
		{"sklearn/digits.csv", 1797, 65},
		{"sklearn/diabetes.csv", 442, 11},
		{"co2.csv", 468, 2},
	} {
		tab, err := LoadCSV(c.name)
		require.NoError(t, err, c.name)
		assert.Len(t, tab.Rows, c.rows, c.name)
		assert.Len(t, tab.Columns, c.cols, c.name)
	}
}

func TestIrisClassCounts(t *testing.T) {
	tab, err := LoadCSV("sklearn/iris.csv")
	require.NoError(t, err)
	_, y, err := tab.Split("target")
	require.NoError(t, err)
	counts := map[float64]int{}
	for _, v := range y {
		counts[v]++
	}
	// The data README: 50 of each species.
	assert.Equal(t, map[float64]int{0: 50, 1: 50, 2: 50}, counts)
}

func TestReadCSVErrorNamesLineAndColumn(t *testing.T) {
	_, err := ReadCSV(strings.NewReader("a,b\n1,2\n3,x\n"), "bad.csv")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.csv:3")
	assert.Contains(t, err.Error(), `column 2 ("b")`)
}

// Split's missing target names the file's header line; a short row names
// its line.
func TestReadCSVMissingTargetAndShortRow(t *testing.T) {
	tab, err := ReadCSV(strings.NewReader("a,b,c\n1,2,3\n"), "t.csv")
	require.NoError(t, err)
	_, _, err = tab.Split("target")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `t.csv:1: header has no column "target"`)

	_, err = ReadCSV(strings.NewReader("a,b\n1,2\n3\n"), "short.csv")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "short.csv")
	assert.Contains(t, err.Error(), "line 3")
}

func TestLoadCSVMissing(t *testing.T) {
	_, err := LoadCSV("no/such/file.csv")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no/such/file.csv")
}

func TestSplitMissingColumn(t *testing.T) {
	tab := &Table{Columns: []string{"a"}, Rows: [][]float64{{1}}}
	_, _, err := tab.Split("target")
	require.Error(t, err)
}

// Classes reads iris as 150 rows of 4 features with integer species; the
// first row is 5.1, 3.5, 1.4, 0.2 of class 0 and the last of class 2.
func TestClasses(t *testing.T) {
	x, y, err := Classes("sklearn/iris.csv", "target")
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Shape(); got[0] != 150 || got[1] != 4 {
		t.Fatalf("shape %v", got)
	}
	if v := x.Values()[:4]; v[0] != 5.1 || v[1] != 3.5 || v[2] != 1.4 || v[3] != 0.2 {
		t.Errorf("first row %v", v)
	}
	if y[0] != 0 || y[149] != 2 {
		t.Errorf("classes %d … %d", y[0], y[149])
	}
	if _, _, err := Classes("sklearn/iris.csv", "species"); err == nil {
		t.Error("a missing target column was accepted")
	}
}

func TestWithIntercept(t *testing.T) {
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 3, 2)
	got := WithIntercept(x)
	assert.Equal(t, []int{3, 3}, got.Shape())
	assert.Equal(t, []float64{1, 1, 2, 1, 3, 4, 1, 5, 6}, got.Values())
	assert.Panics(t, func() { WithIntercept(tensor.FromFloat64s([]float64{1, 2}, 2)) })
}

func TestSelectColumns(t *testing.T) {
	tab, err := ReadCSV(strings.NewReader("a,b,c\n1,2,3\n4,5,6\n"), "mem.csv")
	require.NoError(t, err)
	x, err := tab.Select("c", "a")
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2}, x.Shape())
	assert.Equal(t, []float64{3, 1, 6, 4}, x.Values())
	_, err = tab.Select("a", "zz", "yy")
	assert.EqualError(t, err, `data: mem.csv:1: header has no column "zz", "yy" (have [a b c])`)
	_, err = ReadCSV(strings.NewReader("a,b\n1,2\n3,x\n"), "bad.csv")
	assert.EqualError(t, err, `data: bad.csv:3: column 2 ("b"): "x" is not a number`)
}

// NaN and ±Inf cells are errors naming the cell (a missing value must not
// pass as a number), a byte-order mark is not part of the first column's
// name, and an error quotes at most 40 characters of a huge cell.
func TestReadCSVRejectsNonFiniteAndStripsBOM(t *testing.T) {
	for _, cell := range []string{"NaN", "nan", "Inf", "-inf", "+Infinity"} {
		_, err := ReadCSV(strings.NewReader("a,b\n1,"+cell+"\n"), "nf.csv")
		if assert.Error(t, err, cell) {
			assert.Contains(t, err.Error(), `nf.csv:2: column 2 ("b")`, cell)
			assert.Contains(t, err.Error(), "is not a finite number", cell)
		}
	}
	tab, err := ReadCSV(strings.NewReader("\ufeffa,b\n1,2\n"), "bom.csv")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, tab.Columns)
	x, err := tab.Select("a")
	require.NoError(t, err)
	assert.Equal(t, []float64{1}, x.Values())

	huge := strings.Repeat("z", 1<<20)
	_, err = ReadCSV(strings.NewReader("a\n"+huge+"\n"), "huge.csv")
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 200)
	assert.Contains(t, err.Error(), strings.Repeat("z", 40)+"… (1048576 bytes)")
}
