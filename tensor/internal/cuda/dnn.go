//go:build linux && (amd64 || arm64)

package cuda

import (
	"errors"
	"fmt"
	"unsafe"
)

// cuDNN's convolutions (NVIDIA, 2025, cuDNN API Reference, the cudnn_cnn
// and cudnn_ops libraries of the legacy API, which cuDNN 9 keeps beside
// its graph API): a float32 convolution and its two gradients, each one
// call instead of an im2col or col2im kernel around a cuBLAS product per
// group. cuDNN is optional: where it is not installed the package's own
// kernels run (Kernels.Im2Col, Col2Im and the products).

var (
	libDNN = library{"cuDNN", []string{"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so.*"}}
	// cuDNN 9's shim loads its sub-libraries by name; they are loaded
	// first from the shim's folder (in dependency order), so that a pip
	// wheel's copy is found where the loader's path does not reach it.
	libDNNParts = []library{
		{"cuDNN graph", []string{"libcudnn_graph.so.9", "libcudnn_graph.so.*"}},
		{"cuDNN engines", []string{"libcudnn_engines_precompiled.so.9", "libcudnn_engines_precompiled.so.*"}},
		{"cuDNN engines", []string{"libcudnn_engines_runtime_compiled.so.9", "libcudnn_engines_runtime_compiled.so.*"}},
		{"cuDNN heuristics", []string{"libcudnn_heuristic.so.9", "libcudnn_heuristic.so.*"}},
		{"cuDNN ops", []string{"libcudnn_ops.so.9", "libcudnn_ops.so.*"}},
		{"cuDNN cnn", []string{"libcudnn_cnn.so.9", "libcudnn_cnn.so.*"}},
		// cuDNN 8's parts.
		{"cuDNN ops", []string{"libcudnn_ops_infer.so.8"}},
		{"cuDNN ops", []string{"libcudnn_ops_train.so.8"}},
		{"cuDNN cnn", []string{"libcudnn_cnn_infer.so.8"}},
		{"cuDNN cnn", []string{"libcudnn_cnn_train.so.8"}},
	}

	// dnnMinVersion is the oldest cuDNN used: 8.0, the first with
	// CUDNN_FMA_MATH.
	dnnMinVersion = 8000
)

// dnnAPI holds the cuDNN functions the package calls. Descriptors and the
// handle are pointers (uintptr); device arrays are uint64; enums are int32.
type dnnAPI struct {
	createHandle      func(h *uintptr) int32
	destroy           func(h uintptr) int32
	getVersion        func() uintptr
	getErrorString    func(status int32) string
	setStream         func(h, stream uintptr) int32
	createTensor      func(d *uintptr) int32
	setTensor4d       func(d uintptr, format, dt, n, c, h, w int32) int32
	destroyTensor     func(d uintptr) int32
	createFilter      func(d *uintptr) int32
	setFilter4d       func(d uintptr, dt, format, k, c, h, w int32) int32
	destroyFilter     func(d uintptr) int32
	createConv        func(d *uintptr) int32
	setConv2d         func(d uintptr, padH, padW, strideH, strideW, dilH, dilW, mode, computeType int32) int32
	setGroupCount     func(d uintptr, groups int32) int32
	setMathType       func(d uintptr, mathType int32) int32
	destroyConv       func(d uintptr) int32
	forwardSize       func(h, x, w, conv, y uintptr, algo int32, bytes *uintptr) int32
	backwardDataSize  func(h, w, dy, conv, dx uintptr, algo int32, bytes *uintptr) int32
	backwardFilterSiz func(h, x, dy, conv, dw uintptr, algo int32, bytes *uintptr) int32
	// forward(h, alpha, xd, x, wd, w, conv, algo, ws, wsBytes, beta, yd, y);
	// backwardData(h, alpha, wd, w, dyd, dy, conv, algo, ws, wsBytes, beta, dxd, dx);
	// backwardFilter(h, alpha, xd, x, dyd, dy, conv, algo, ws, wsBytes, beta, dwd, dw).
	forward, backwardData, backwardFilter func(h uintptr, alpha unsafe.Pointer, ad uintptr, a uint64, bd uintptr, b uint64,
		conv uintptr, algo int32, ws uint64, wsBytes uintptr, beta unsafe.Pointer, od uintptr, out uint64) int32
}

func (a *dnnAPI) symbols() []symbol {
	return []symbol{
		{"cudnnCreate", &a.createHandle}, {"cudnnDestroy", &a.destroy},
		{"cudnnGetVersion", &a.getVersion}, {"cudnnGetErrorString", &a.getErrorString},
		{"cudnnSetStream", &a.setStream},
		{"cudnnCreateTensorDescriptor", &a.createTensor}, {"cudnnSetTensor4dDescriptor", &a.setTensor4d},
		{"cudnnDestroyTensorDescriptor", &a.destroyTensor},
		{"cudnnCreateFilterDescriptor", &a.createFilter}, {"cudnnSetFilter4dDescriptor", &a.setFilter4d},
		{"cudnnDestroyFilterDescriptor", &a.destroyFilter},
		{"cudnnCreateConvolutionDescriptor", &a.createConv}, {"cudnnSetConvolution2dDescriptor", &a.setConv2d},
		{"cudnnSetConvolutionGroupCount", &a.setGroupCount}, {"cudnnSetConvolutionMathType", &a.setMathType},
		{"cudnnDestroyConvolutionDescriptor", &a.destroyConv},
		{"cudnnGetConvolutionForwardWorkspaceSize", &a.forwardSize},
		{"cudnnGetConvolutionBackwardDataWorkspaceSize", &a.backwardDataSize},
		{"cudnnGetConvolutionBackwardFilterWorkspaceSize", &a.backwardFilterSiz},
		{"cudnnConvolutionForward", &a.forward}, {"cudnnConvolutionBackwardData", &a.backwardData},
		{"cudnnConvolutionBackwardFilter", &a.backwardFilter},
	}
}

// cuDNN's enum values (cudnn_graph.h and cudnn_cnn.h).
const (
	dnnTensorNCHW       = 0 // CUDNN_TENSOR_NCHW
	dnnDataFloat        = 0 // CUDNN_DATA_FLOAT
	dnnCrossCorrelation = 1 // CUDNN_CROSS_CORRELATION: no flip, as deep learning's convolution
	dnnTensorOpMath     = 1 // CUDNN_TENSOR_OP_MATH: TF32 tensor cores for float32 data
	dnnFMAMath          = 3 // CUDNN_FMA_MATH: float32 FMA only, no tensor cores
	// One algorithm per direction, supported for every float32 NCHW
	// geometry with groups and dilation, deterministic (the filter
	// gradient's ALGO_0 adds with atomics), and with a small workspace:
	// the implicit precomputed GEMM and the data and filter gradients'
	// ALGO_1.
	dnnForwardAlgo        = 1 // CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM
	dnnBackwardDataAlgo   = 1 // CUDNN_CONVOLUTION_BWD_DATA_ALGO_1
	dnnBackwardFilterAlgo = 1 // CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1
)

// ConvDirection says which of a convolution's three products Conv
// computes.
type ConvDirection int

const (
	// ConvForward computes y (N, O, HO, WO) from x (N, C, H, W) and the
	// filters w (O, C/groups, KH, KW).
	ConvForward ConvDirection = iota
	// ConvBackwardData computes dx from w and dy.
	ConvBackwardData
	// ConvBackwardFilter computes dw from x and dy.
	ConvBackwardFilter
)

// DNN is the Driver's cuDNN handle with the descriptors of the geometries
// it has seen. Its methods run under the Driver's lock.
type DNN struct {
	d       *Driver
	api     dnnAPI
	handle  uintptr
	path    string
	version int
	descs   map[dnnKey]*dnnDescs
	ws      *Buffer // the workspace, grown to the largest asked for
	scalars *gemmScalars
}

// dnnKey is a geometry with its output channels, groups and math type.
type dnnKey struct {
	g         ConvGeom
	o, groups int
	mathType  int32
}

// dnnDescs are the descriptors of one geometry and its workspace sizes.
type dnnDescs struct {
	x, y, w, conv uintptr
	bytes         [3]uintptr // per ConvDirection
	unsupported   [3]bool    // the direction's algorithm does not serve the geometry
}

// ErrNotServed is returned by DNN.Conv when cuDNN's algorithm for the
// direction does not support the geometry (its workspace query answered
// CUDNN_STATUS_NOT_SUPPORTED): the caller computes it another way.
var ErrNotServed = errors.New("cuda: cudnn conv: the geometry is not supported by the algorithm")

// notSupported reports whether s says that cuDNN does not support the
// call's arguments: CUDNN_STATUS_NOT_SUPPORTED (9 before cuDNN 9, 3000
// from cuDNN 9 on) or cuDNN 9's sub-codes for a pattern, shape, data type
// or layout (3001-3004). Its other 3000s (a driver or architecture
// mismatch, a missing sub-library) are errors: a broken installation.
func notSupported(s int32) bool { return s == 9 || s >= 3000 && s <= 3004 }

// DNN returns the Driver's cuDNN handle, loading cuDNN on first use; an
// error says why it is not available, wrapping ErrNoDriver where no
// cuDNN library was found.
func (d *Driver) DNN() (*DNN, error) {
	if _, err := d.BLAS(); err != nil { // its precision sets the math type
		return nil, err
	}
	err := d.do(func() error {
		if d.dnn != nil || d.dnnErr != nil {
			return d.dnnErr
		}
		d.dnn, d.dnnErr = d.loadDNN()
		return d.dnnErr
	})
	if err != nil {
		return nil, err
	}
	return d.dnn, nil
}

func (d *Driver) loadDNN() (*DNN, error) {
	n := &DNN{d: d, descs: map[dnnKey]*dnnDescs{}, scalars: new(gemmScalars)}
	path, err := openLibrary(libDNN, d.search, func(dir string) {
		for _, lib := range libDNNParts {
			preload(dir, lib.names)
		}
	}, func(h uintptr, path string) error {
		return bind(h, path, n.api.symbols())
	})
	if err != nil {
		return nil, err
	}
	n.path = path
	n.version = int(n.api.getVersion())
	if n.version < dnnMinVersion {
		return nil, fmt.Errorf("cuda: %s is cuDNN %d; the convolutions need %d or later", path, n.version, dnnMinVersion)
	}
	if s := n.api.createHandle(&n.handle); s != 0 {
		return nil, n.error("cudnnCreate", s)
	}
	if s := n.api.setStream(n.handle, defaultStream); s != 0 {
		_ = n.api.destroy(n.handle)
		return nil, n.error("cudnnSetStream", s)
	}
	return n, nil
}

// error names the failed call and cuDNN's message for status s.
func (n *DNN) error(call string, s int32) error {
	return &Error{Call: call, Msg: fmt.Sprintf("%s (%d)", n.api.getErrorString(s), s)}
}

// Version returns cuDNN's version (90100 for 9.1.0) and the library's
// path.
func (n *DNN) Version() (int, string) { return n.version, n.path }

// destroy releases the descriptors, the workspace and the handle; the
// caller holds the Driver's lock.
func (n *DNN) destroy() error {
	for _, ds := range n.descs {
		n.api.destroyTensor(ds.x)
		n.api.destroyTensor(ds.y)
		n.api.destroyFilter(ds.w)
		n.api.destroyConv(ds.conv)
	}
	n.descs = nil
	if n.ws != nil {
		n.d.pool.put(n.ws)
		n.ws = nil
	}
	if s := n.api.destroy(n.handle); s != 0 {
		return n.error("cudnnDestroy", s)
	}
	return nil
}

// Conv computes one product of the float32 convolution of geometry g
// with o output channels in groups groups, from a and b into out (beta
// 0: out is overwritten): ConvForward y from (x, w), ConvBackwardData dx
// from (w, dy), ConvBackwardFilter dw from (x, dy). Every array is
// contiguous NCHW (the filters O, C/groups, KH, KW). It returns
// ErrNotServed, having computed nothing, where the direction's algorithm
// does not support the geometry. The products are float32 FMAs, or TF32
// on the tensor cores when the BLAS handle's precision asks for TF32 or
// bfloat16.
func (n *DNN) Conv(dir ConvDirection, g ConvGeom, o, groups int, a, b, out *Buffer) error {
	if err := g.check("cudnn conv", false); err != nil {
		return err
	}
	if o < 0 || groups <= 0 || g.C%groups != 0 || o%groups != 0 {
		return fmt.Errorf("cuda: cudnn conv: %d input and %d output channels do not split into %d groups", g.C, o, groups)
	}
	if dir < ConvForward || dir > ConvBackwardFilter {
		return fmt.Errorf("cuda: cudnn conv: unknown direction %d", dir)
	}
	xn, yn, wn := g.N*g.C*g.H*g.W, g.N*o*g.HO*g.WO, o*(g.C/groups)*g.KH*g.KW
	sizes := [3][3]int{ // a, b, out per direction
		ConvForward:        {xn, wn, yn},
		ConvBackwardData:   {wn, yn, xn},
		ConvBackwardFilter: {xn, yn, wn},
	}
	names := [3][3]string{
		ConvForward:        {"x", "w", "y"},
		ConvBackwardData:   {"w", "dy", "dx"},
		ConvBackwardFilter: {"x", "dy", "dw"},
	}
	for i, buf := range []*Buffer{a, b, out} {
		if need := 4 * sizes[dir][i]; buf == nil || buf.size < need || buf.ptr%4 != 0 {
			have := 0
			if buf != nil {
				have = buf.size
			}
			return fmt.Errorf("cuda: cudnn conv: %s needs %d float32 elements (%d bytes, 4-byte aligned); its buffer has %d bytes", names[dir][i], sizes[dir][i], need, have)
		}
	}
	if sizes[dir][2] == 0 {
		return nil
	}
	if sizes[dir][0] == 0 || sizes[dir][1] == 0 {
		return n.d.Zero(out, 4*sizes[dir][2]) // an empty batch's filter gradient
	}
	for _, v := range []int{g.N, g.C, g.H, g.W, o, g.HO, g.WO} {
		if v > maxDimension {
			return fmt.Errorf("cuda: cudnn conv: size %d is over cuDNN's 32-bit sizes", v)
		}
	}
	if err := n.d.lock(); err != nil {
		return err
	}
	defer n.d.unlock()
	ds, err := n.descriptors(g, o, groups)
	if err != nil {
		return err
	}
	if ds.unsupported[dir] {
		return ErrNotServed
	}
	ws, err := n.workspace(ds.bytes[dir])
	if err != nil {
		return err
	}
	var wsPtr uint64
	if ws != nil {
		wsPtr = ws.ptr
	}
	sc := n.scalars
	sc.hold(1, 0)
	defer sc.release()
	alpha, beta := unsafe.Pointer(&sc.s[0]), unsafe.Pointer(&sc.s[1])
	var s int32
	var call string
	switch dir {
	case ConvForward:
		call = "cudnnConvolutionForward"
		s = n.api.forward(n.handle, alpha, ds.x, a.ptr, ds.w, b.ptr, ds.conv, dnnForwardAlgo, wsPtr, ds.bytes[dir], beta, ds.y, out.ptr)
	case ConvBackwardData:
		call = "cudnnConvolutionBackwardData"
		s = n.api.backwardData(n.handle, alpha, ds.w, a.ptr, ds.y, b.ptr, ds.conv, dnnBackwardDataAlgo, wsPtr, ds.bytes[dir], beta, ds.x, out.ptr)
	default:
		call = "cudnnConvolutionBackwardFilter"
		s = n.api.backwardFilter(n.handle, alpha, ds.x, a.ptr, ds.y, b.ptr, ds.conv, dnnBackwardFilterAlgo, wsPtr, ds.bytes[dir], beta, ds.w, out.ptr)
	}
	if notSupported(s) { // nothing was computed: the caller's other way does it
		ds.unsupported[dir] = true
		return ErrNotServed
	}
	if s != 0 {
		return n.error(call, s)
	}
	return nil
}

// mathType is the cuDNN math type for the BLAS handle's precision.
func (n *DNN) mathType() int32 {
	switch n.d.blas.precision {
	case PrecisionTF32, PrecisionBF16:
		// cuDNN's legacy API has no bfloat16 conversion of float32 data
		// (its ALLOW_CONVERSION math converts to FP16, whose range is
		// ±65504): the convolutions take TF32 under either opt-in.
		return dnnTensorOpMath
	}
	return dnnFMAMath
}

// descriptors returns (making them on first use) the descriptors of a
// geometry at the current math type; the caller holds the lock.
func (n *DNN) descriptors(g ConvGeom, o, groups int) (*dnnDescs, error) {
	key := dnnKey{g: g, o: o, groups: groups, mathType: n.mathType()}
	if ds, ok := n.descs[key]; ok {
		return ds, nil
	}
	ds := new(dnnDescs)
	fail := func(call string, s int32) (*dnnDescs, error) {
		for _, t := range []uintptr{ds.x, ds.y} {
			if t != 0 {
				n.api.destroyTensor(t)
			}
		}
		if ds.w != 0 {
			n.api.destroyFilter(ds.w)
		}
		if ds.conv != 0 {
			n.api.destroyConv(ds.conv)
		}
		return nil, n.error(call, s)
	}
	i32 := func(v int) int32 { return int32(v) }
	if s := n.api.createTensor(&ds.x); s != 0 {
		return fail("cudnnCreateTensorDescriptor", s)
	}
	if s := n.api.setTensor4d(ds.x, dnnTensorNCHW, dnnDataFloat, i32(g.N), i32(g.C), i32(g.H), i32(g.W)); s != 0 {
		return fail("cudnnSetTensor4dDescriptor (input)", s)
	}
	if s := n.api.createTensor(&ds.y); s != 0 {
		return fail("cudnnCreateTensorDescriptor", s)
	}
	if s := n.api.setTensor4d(ds.y, dnnTensorNCHW, dnnDataFloat, i32(g.N), i32(o), i32(g.HO), i32(g.WO)); s != 0 {
		return fail("cudnnSetTensor4dDescriptor (output)", s)
	}
	if s := n.api.createFilter(&ds.w); s != 0 {
		return fail("cudnnCreateFilterDescriptor", s)
	}
	if s := n.api.setFilter4d(ds.w, dnnDataFloat, dnnTensorNCHW, i32(o), i32(g.C/groups), i32(g.KH), i32(g.KW)); s != 0 {
		return fail("cudnnSetFilter4dDescriptor", s)
	}
	if s := n.api.createConv(&ds.conv); s != 0 {
		return fail("cudnnCreateConvolutionDescriptor", s)
	}
	if s := n.api.setConv2d(ds.conv, i32(g.PH), i32(g.PW), i32(g.SH), i32(g.SW), i32(g.DH), i32(g.DW), dnnCrossCorrelation, dnnDataFloat); s != 0 {
		return fail("cudnnSetConvolution2dDescriptor", s)
	}
	if s := n.api.setGroupCount(ds.conv, i32(groups)); s != 0 {
		return fail("cudnnSetConvolutionGroupCount", s)
	}
	if s := n.api.setMathType(ds.conv, key.mathType); s != 0 {
		return fail("cudnnSetConvolutionMathType", s)
	}
	// A direction whose algorithm does not support the geometry is left
	// to the caller's other way; any other failure is an error.
	sizes := [3]struct {
		call string
		s    int32
	}{
		{"cudnnGetConvolutionForwardWorkspaceSize", n.api.forwardSize(n.handle, ds.x, ds.w, ds.conv, ds.y, dnnForwardAlgo, &ds.bytes[ConvForward])},
		{"cudnnGetConvolutionBackwardDataWorkspaceSize", n.api.backwardDataSize(n.handle, ds.w, ds.y, ds.conv, ds.x, dnnBackwardDataAlgo, &ds.bytes[ConvBackwardData])},
		{"cudnnGetConvolutionBackwardFilterWorkspaceSize", n.api.backwardFilterSiz(n.handle, ds.x, ds.y, ds.conv, ds.w, dnnBackwardFilterAlgo, &ds.bytes[ConvBackwardFilter])},
	}
	for dir, q := range sizes {
		switch {
		case notSupported(q.s):
			ds.unsupported[dir] = true
		case q.s != 0:
			return fail(q.call, q.s)
		}
	}
	n.descs[key] = ds
	return ds, nil
}

// workspace returns a device buffer of at least bytes (nil for none),
// growing the kept one; the caller holds the lock. The kernels queued on
// the old one are ordered before any later use of its memory by the
// default stream, as every buffer the pool hands out again is.
func (n *DNN) workspace(bytes uintptr) (*Buffer, error) {
	if bytes == 0 {
		return nil, nil
	}
	if n.ws != nil && uintptr(n.ws.size) >= bytes {
		return n.ws, nil
	}
	if n.ws != nil {
		n.d.pool.put(n.ws)
		n.ws = nil
	}
	b, err := n.d.pool.get(int(bytes), isOutOfMemory)
	if err != nil {
		return nil, fmt.Errorf("cuda: cudnn conv: a workspace of %d bytes: %w", bytes, err)
	}
	n.ws = b
	return b, nil
}
