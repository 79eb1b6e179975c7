package numtest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
)

// Here returns the file:line it is called from: put it on the line of the
// call a misuse test expects the *tensor.Error to name.
func Here() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, line)
}

// Misuse runs f and checks that it panics with a *tensor.Error for op
// whose message contains each of fragments and whose caller is site (from
// Here on the line of the offending call). It returns the error, or nil
// after failing t when f does not panic so.
func Misuse(t testing.TB, op, site string, f func(), fragments ...string) (e *tensor.Error) {
	t.Helper()
	func() {
		defer func() {
			r := recover()
			if r == nil {
				t.Errorf("%s: no panic, want a *tensor.Error", op)
				return
			}
			var ok bool
			if e, ok = r.(*tensor.Error); !ok {
				t.Errorf("%s: panic value %v (%T) is not a *tensor.Error", op, r, r)
			}
		}()
		f()
	}()
	if e == nil {
		return nil
	}
	if e.Op != op {
		t.Errorf("panic names %q, want %q (%v)", e.Op, op, e)
	}
	if e.Caller != site {
		t.Errorf("%s: panic names the caller %q, want %q", op, e.Caller, site)
	}
	for _, f := range fragments {
		if !strings.Contains(e.Msg, f) {
			t.Errorf("%s: message %q does not contain %q", op, e.Msg, f)
		}
	}
	return e
}
