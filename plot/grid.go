package plot

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"

	"github.com/gradus-ml/gradus/tensor"
)

// ImageGrid writes the grey-scale images imgs (n, h, w), or (n, 1, h, w),
// as a grid of cols columns to path as a PNG, each image scaled up by the
// integer factor scale (at least 1) with a one-pixel white border. Values
// are mapped linearly from [lo, hi] to black..white and clipped; lo == hi
// takes each image's own range. It creates path's directory if needed.
func ImageGrid(path string, imgs *tensor.Tensor, cols, scale int, lo, hi float64) error {
	sh := imgs.Shape()
	if len(sh) == 4 && sh[1] == 1 {
		sh = []int{sh[0], sh[2], sh[3]}
	}
	if len(sh) != 3 || sh[0] == 0 {
		return fmt.Errorf("plot: ImageGrid %s: images of shape %s, want (n, h, w) or (n, 1, h, w) with n > 0", path, tensor.FormatShape(imgs.Shape()))
	}
	if cols < 1 || scale < 1 {
		return fmt.Errorf("plot: ImageGrid %s: %d columns, scale %d: both must be >= 1", path, cols, scale)
	}
	n, h, w := sh[0], sh[1], sh[2]
	vals := imgs.Cast(tensor.Float64).Float64s()
	rows := (n + cols - 1) / cols
	cw, ch := w*scale+1, h*scale+1
	out := image.NewGray(image.Rect(0, 0, cols*cw+1, rows*ch+1))
	for i := range out.Pix {
		out.Pix[i] = 255
	}
	for k := range n {
		px := vals[k*h*w : (k+1)*h*w]
		a, b := lo, hi
		if a == b {
			a, b = px[0], px[0]
			for _, v := range px {
				a, b = min(a, v), max(b, v)
			}
		}
		x0, y0 := (k%cols)*cw+1, (k/cols)*ch+1
		for y := range h * scale {
			for x := range w * scale {
				v := px[(y/scale)*w+x/scale]
				f := 0.0
				if b > a {
					f = min(max((v-a)/(b-a), 0), 1)
				}
				out.SetGray(x0+x, y0+y, color.Gray{Y: uint8(f*255 + 0.5)})
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := png.Encode(f, out); err != nil {
		f.Close()
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	return f.Close()
}
