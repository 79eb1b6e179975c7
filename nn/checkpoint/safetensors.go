// Package checkpoint saves and loads tensors in the safetensors format
// (https://github.com/huggingface/safetensors), so weights move between
// Gradus, PyTorch and JAX. A file is
//
//	8 bytes   N, the header length, as a little-endian uint64
//	N bytes   a UTF-8 JSON object, padded with spaces to a multiple of 8:
//	          {"__metadata__": {"k": "v", ...},
//	           "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]}, ...}
//	the rest  the tensors' bytes, row-major and little-endian; tensor
//	          "name" occupies bytes [b, e) of this section
//
// Write and WriteFile store tensors sorted by name, contiguously, with the
// metadata first in the header, so the same tensors always give the same
// bytes. Read and ReadFile check everything a corrupt or truncated file
// could get wrong and return a *FormatError naming the file and the tensor.
// WriteFile is atomic: a crash or an error leaves either the old file or the
// new one, never a mixture.
//
// Save and LoadInto are the training-loop helpers: they store a model's
// state dict (nn.State: parameters and buffers under PyTorch's dotted
// names), its random streams (a Dropout's) and the optimiser's state, and
// restore all of them in one call that validates the whole checkpoint
// before it changes anything.
//
//	err := checkpoint.Save("model.safetensors", model, checkpoint.SaveOptions{Optimizer: opt, Metadata: map[string]string{"epoch": "3"}})
//	...
//	meta, err := checkpoint.LoadInto("model.safetensors", model, checkpoint.LoadOptions{Optimizer: opt}) // both unchanged on error
//
// Files are written in F32 and F64, the dtypes Gradus computes in. Reading
// takes every dtype a model file uses: F64 and F32 as they are, F16 and
// BF16 widened exactly to float32, and the integers (I64 … U8) and BOOL as
// float64, with an error naming the tensor when a value cannot be held
// exactly (an integer beyond 2⁵³); LoadInto converts to each parameter's
// dtype. The 8-bit floats and C64 are refused with a clear error.
package checkpoint

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gradus-ml/gradus/tensor"
)

// metadataKey is the header entry that holds the string→string metadata.
const metadataKey = "__metadata__"

// maxHeader bounds the header length a reader accepts, as the reference
// implementation does (100 MB), so a corrupt length cannot make it
// allocate without bound.
const maxHeader = 100_000_000

// maxElements bounds a tensor's elements, as the tensor package does
// (2⁴⁸), so that a header is refused before it can make tensor.New panic.
const maxElements = 1 << 48

// ErrFormat is wrapped by every *FormatError: errors.Is(err, ErrFormat)
// tells a malformed file from an I/O failure.
var ErrFormat = errors.New("invalid safetensors data")

// FormatError describes malformed safetensors data: a truncated file, a
// corrupt header, an unsupported dtype, offsets that overlap or do not fit
// the shape.
type FormatError struct {
	File   string // the file, when read with ReadFile or LoadInto
	Tensor string // the tensor concerned, if any
	Msg    string // what is wrong with the file
}

// Error describes the problem, e.g. `checkpoint: m.safetensors: tensor
// "fc.weight": unknown dtype "F17"`.
func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("checkpoint: ")
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	if e.Tensor != "" {
		fmt.Fprintf(&b, "tensor %q: ", e.Tensor)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns ErrFormat.
func (e *FormatError) Unwrap() error { return ErrFormat }

func formatErr(tensorName, format string, args ...any) *FormatError {
	return &FormatError{Tensor: tensorName, Msg: fmt.Sprintf(format, args...)}
}

// Write writes tensors and metadata (which may be nil) to w in safetensors
// format. Tensors are stored sorted by name; views need not be
// contiguous. It returns an error for a nil tensor, for a name that is
// empty, not UTF-8 or "__metadata__", or if w fails.
func Write(w io.Writer, tensors map[string]*tensor.Tensor, metadata map[string]string) error {
	names, header, err := encodeHeader(tensors, metadata)
	if err != nil {
		return err
	}
	if err := write(w, names, header, tensors); err != nil {
		return fmt.Errorf("checkpoint: write: %w", err)
	}
	return nil
}

// write writes the header length, the header and the tensors' data.
func write(w io.Writer, names []string, header []byte, tensors map[string]*tensor.Tensor) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(header)))
	bw.Write(n[:])
	bw.Write(header)
	// Encode through a scratch buffer: one Write per 8 KB, not per element.
	buf := make([]byte, 0, 8<<10)
	flush := func() {
		bw.Write(buf)
		buf = buf[:0]
	}
	for _, name := range names {
		t := tensors[name].To(tensor.CPU).Contiguous() // a GPU tensor is copied back first
		if t.Size() == 0 {
			continue
		}
		switch t.DType() {
		case tensor.Float32:
			for _, v := range t.Float32s() {
				if len(buf)+4 > cap(buf) {
					flush()
				}
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
		case tensor.Float64:
			for _, v := range t.Float64s() {
				if len(buf)+8 > cap(buf) {
					flush()
				}
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
			}
		}
	}
	flush()
	// bufio.Writer keeps its first error and reports it here.
	return bw.Flush()
}

// encodeHeader validates the tensors and returns their names in storage
// order and the padded JSON header.
func encodeHeader(tensors map[string]*tensor.Tensor, metadata map[string]string) ([]string, []byte, error) {
	names := make([]string, 0, len(tensors))
	for name, t := range tensors {
		switch {
		case t == nil:
			return nil, nil, fmt.Errorf("checkpoint: tensor %q is nil", name)
		case name == "" || name == metadataKey || !utf8.ValidString(name):
			return nil, nil, fmt.Errorf("checkpoint: invalid tensor name %q", name)
		}
		if _, ok := dtypeNames[t.DType()]; !ok {
			return nil, nil, fmt.Errorf("checkpoint: tensor %q has unsupported dtype %v", name, t.DType())
		}
		names = append(names, name)
	}
	slices.Sort(names)
	for k, v := range metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, nil, fmt.Errorf("checkpoint: metadata %q: %q is not valid UTF-8", k, v)
		}
	}

	var h bytes.Buffer
	h.WriteByte('{')
	sep := func() {
		if h.Len() > 1 {
			h.WriteByte(',')
		}
	}
	if len(metadata) > 0 {
		keys := make([]string, 0, len(metadata))
		for k := range metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		writeJSONString(&h, metadataKey)
		h.WriteString(":{")
		for i, k := range keys {
			if i > 0 {
				h.WriteByte(',')
			}
			writeJSONString(&h, k)
			h.WriteByte(':')
			writeJSONString(&h, metadata[k])
		}
		h.WriteByte('}')
	}
	var off int64
	for _, name := range names {
		t := tensors[name]
		size := int64(t.Size()) * int64(t.DType().Size())
		sep()
		writeJSONString(&h, name)
		fmt.Fprintf(&h, `:{"dtype":"%s","shape":[`, dtypeNames[t.DType()])
		for i, d := range t.Shape() {
			if i > 0 {
				h.WriteByte(',')
			}
			fmt.Fprint(&h, d)
		}
		fmt.Fprintf(&h, `],"data_offsets":[%d,%d]}`, off, off+size)
		off += size
	}
	h.WriteByte('}')
	for h.Len()%8 != 0 {
		h.WriteByte(' ')
	}
	return names, h.Bytes(), nil
}

// writeJSONString writes s as a JSON string without HTML escaping, so
// names such as "a<b" read the same in every implementation's output.
func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)           // cannot fail for a string
	b.Truncate(b.Len() - 1) // Encode appends a newline
}

// Read reads safetensors data from r, which must hold exactly one file's
// bytes: trailing bytes after the last tensor are an error, as is data that
// ends early. Malformed data gives a *FormatError naming the tensor
// concerned; I/O failures are returned wrapped.
func Read(r io.Reader) (map[string]*tensor.Tensor, map[string]string, error) {
	return read(r, -1)
}

// read parses safetensors data; size is the total length if known (a
// file), else -1.
func read(r io.Reader, size int64) (map[string]*tensor.Tensor, map[string]string, error) {
	entries, metadata, n, err := readHeader(r, size)
	if err != nil {
		return nil, nil, err
	}
	return readTensors(r, size, entries, metadata, n)
}

// readHeader reads and validates the header, returning its entries,
// metadata and length.
func readHeader(r io.Reader, size int64) ([]entry, map[string]string, uint64, error) {
	var nb [8]byte
	if _, err := io.ReadFull(r, nb[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil, 0, formatErr("", "truncated: %s", "the 8-byte header length is missing")
		}
		return nil, nil, 0, fmt.Errorf("checkpoint: read: %w", err)
	}
	n := binary.LittleEndian.Uint64(nb[:])
	if size >= 0 && n > uint64(size-8) {
		return nil, nil, 0, formatErr("", "truncated: header length %d but only %d bytes follow", n, size-8)
	}
	if n > maxHeader {
		return nil, nil, 0, formatErr("", "header length %d exceeds the limit of %d bytes", n, maxHeader)
	}
	// Read through a limit rather than into a buffer of the claimed size:
	// from a stream, whose size is unknown, an 8-byte input claiming a
	// 100 MB header must cost bytes, not 100 MB.
	header, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err != nil {
		return nil, nil, 0, fmt.Errorf("checkpoint: read: %w", err)
	}
	if uint64(len(header)) < n {
		return nil, nil, 0, formatErr("", "truncated: header length %d but only %d bytes follow", n, len(header))
	}
	entries, metadata, err := parseHeader(header)
	if err != nil {
		return nil, nil, 0, err
	}
	return entries, metadata, n, nil
}

// readTensors reads the data section after a header of length n.
func readTensors(r io.Reader, size int64, entries []entry, metadata map[string]string, n uint64) (map[string]*tensor.Tensor, map[string]string, error) {
	var err error
	var dataLen int64
	for _, e := range entries {
		dataLen = max(dataLen, e.end)
	}
	if size >= 0 && size-8-int64(n) != dataLen {
		return nil, nil, dataLenErr(entries, size-8-int64(n), dataLen)
	}
	var data []byte
	if size >= 0 {
		// The length was checked against the file's size above.
		data = make([]byte, dataLen)
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, nil, fmt.Errorf("checkpoint: read: %w", err)
		}
	} else {
		data, err = readData(r, entries, dataLen)
	}
	if err != nil {
		return nil, nil, err
	}
	tensors := make(map[string]*tensor.Tensor, len(entries))
	for _, e := range entries {
		t, err := decode(e, data[e.begin:e.end])
		if err != nil {
			return nil, nil, err
		}
		tensors[e.name] = t
	}
	return tensors, metadata, nil
}

// dataLenErr reports a data section of have bytes where the tensors need
// want: a truncated file, naming the first tensor that does not fit, or
// trailing garbage.
func dataLenErr(entries []entry, have, want int64) error {
	if have > want {
		return formatErr("", "%d bytes of trailing data after the last tensor (the tensors need %d)", have-want, want)
	}
	var bad entry
	for _, e := range entries {
		if e.end > have && (bad.name == "" || e.begin < bad.begin) {
			bad = e
		}
	}
	return formatErr(bad.name, "truncated: data_offsets [%d, %d] extend past the end of the data section (%d bytes; the tensors need %d)",
		bad.begin, bad.end, have, want)
}

// readData reads exactly n bytes and checks that r ends there. It grows the
// buffer as data arrives, so a corrupt header claiming a huge tensor fails
// at the end of the input instead of allocating what it claims.
func readData(r io.Reader, entries []entry, n int64) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(int(min(n, 1<<16)) + 1)
	got, err := b.ReadFrom(io.LimitReader(r, n+1))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: read: %w", err)
	}
	if got > n {
		// Count the trailing bytes for the message.
		rest, err := io.Copy(io.Discard, r)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: read: %w", err)
		}
		got += rest
	}
	if got != n {
		return nil, dataLenErr(entries, got, n)
	}
	return b.Bytes(), nil
}

// entry is one tensor's header record, validated.
type entry struct {
	name       string
	file       string       // the dtype in the file, e.g. "BF16"
	dtype      tensor.DType // the dtype it is read as
	shape      []int
	begin, end int64
}

// parseHeader decodes and validates the JSON header: every tensor has a
// supported dtype, a shape whose byte size matches its offsets, and the
// offsets tile the data section without gaps or overlaps.
func parseHeader(header []byte) ([]entry, map[string]string, error) {
	if !utf8.Valid(header) {
		return nil, nil, formatErr("", "header is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(header))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, formatErr("", "header is not a JSON object: %s", headerSnippet(header))
	}
	var entries []entry
	var metadata map[string]string
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, formatErr("", "corrupt JSON header: %v", err)
		}
		name := tok.(string) // object keys are strings
		if name == "" {
			return nil, nil, formatErr("", "a tensor has an empty name, which no state dict can hold")
		}
		if seen[name] {
			return nil, nil, formatErr(name, "appears twice in the header")
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, formatErr(name, "corrupt JSON header: %v", err)
		}
		if name == metadataKey {
			if err := json.Unmarshal(raw, &metadata); err != nil {
				return nil, nil, formatErr("", "__metadata__ is not an object of strings: %v", err)
			}
			continue
		}
		e, err := parseEntry(name, raw)
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, e)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, nil, formatErr("", "corrupt JSON header: unterminated object")
	}
	if rest := bytes.TrimRight(header[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, nil, formatErr("", "corrupt JSON header: %d bytes after the object", len(rest))
	}
	if err := checkTiling(entries); err != nil {
		return nil, nil, err
	}
	return entries, metadata, nil
}

func headerSnippet(h []byte) string {
	if len(h) > 40 {
		return fmt.Sprintf("%q...", h[:40])
	}
	return fmt.Sprintf("%q", h)
}

// parseEntry validates one tensor's record.
func parseEntry(name string, raw json.RawMessage) (entry, error) {
	var rec struct {
		DType       *string  `json:"dtype"`
		Shape       *[]int64 `json:"shape"`
		DataOffsets *[]int64 `json:"data_offsets"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&rec); err != nil {
		return entry{}, formatErr(name, "corrupt header record %s: %v", raw, err)
	}
	switch {
	case rec.DType == nil:
		return entry{}, formatErr(name, "header record %s has no dtype", raw)
	case rec.Shape == nil:
		return entry{}, formatErr(name, "header record %s has no shape", raw)
	case rec.DataOffsets == nil:
		return entry{}, formatErr(name, "header record %s has no data_offsets", raw)
	case len(*rec.DataOffsets) != 2:
		return entry{}, formatErr(name, "data_offsets %v are not [begin, end]", *rec.DataOffsets)
	}
	fd, ok := fileDTypes[*rec.DType]
	if !ok {
		if slices.Contains(unsupportedDTypes, *rec.DType) {
			return entry{}, formatErr(name, "unsupported dtype %q (Gradus reads F64, F32, F16, BF16, the integers and BOOL)", *rec.DType)
		}
		return entry{}, formatErr(name, "unknown dtype %q", *rec.DType)
	}
	e := entry{name: name, file: *rec.DType, dtype: fd.to, begin: (*rec.DataOffsets)[0], end: (*rec.DataOffsets)[1]}
	// The product of the dimensions other than 0 is bounded too: an empty
	// tensor of shape [0, 2⁶⁰] is no more a real file than a full one.
	numel, zero := int64(1), false
	for _, d := range *rec.Shape {
		switch {
		case d < 0:
			return entry{}, formatErr(name, "negative dimension in shape %v", *rec.Shape)
		case d == 0:
			zero = true
		case numel > maxElements/d:
			return entry{}, formatErr(name, "shape %v has more than %d elements", *rec.Shape, int64(maxElements))
		default:
			numel *= d
		}
		e.shape = append(e.shape, int(d))
	}
	if zero {
		numel = 0
	}
	if e.begin < 0 || e.end < e.begin {
		return entry{}, formatErr(name, "invalid data_offsets [%d, %d]", e.begin, e.end)
	}
	if want := numel * int64(fd.size); e.end-e.begin != want {
		return entry{}, formatErr(name, "shape %v %s needs %d bytes but data_offsets [%d, %d] span %d",
			*rec.Shape, *rec.DType, want, e.begin, e.end, e.end-e.begin)
	}
	return e, nil
}

// checkTiling checks that the tensors' byte ranges, in order, start at 0
// and follow each other without gaps or overlaps, as the format requires.
// Zero-size tensors sit anywhere within the covered range.
func checkTiling(entries []entry) error {
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.begin, b.begin), cmp.Compare(a.end, b.end))
	})
	var end int64
	prev := ""
	for _, e := range sorted {
		switch {
		case e.begin == e.end && e.begin <= end:
			continue
		case e.begin < end:
			return formatErr(e.name, "data_offsets [%d, %d] overlap tensor %q, which ends at %d", e.begin, e.end, prev, end)
		case e.begin > end:
			return formatErr(e.name, "data_offsets [%d, %d] leave a gap after byte %d", e.begin, e.end, end)
		}
		end, prev = e.end, e.name
	}
	return nil
}
