//go:build !unix

package checkpoint

import (
	"errors"
	"os"
)

// mapFile is not available here: ReadFile reads the file instead.
func mapFile(*os.File, int64) ([]byte, func(), error) {
	return nil, nil, errors.New("memory mapping not supported on this system")
}
