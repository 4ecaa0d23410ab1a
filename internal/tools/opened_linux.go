package tools

import (
	"os"
	"strconv"
)

// openedPath returns the path of the file f has open, as the kernel knows
// it (what a symbolic link led to when f was opened, whatever it leads to
// now), or "" when /proc cannot tell.
func openedPath(f *os.File) string {
	p, err := os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(f.Fd()), 10))
	if err != nil || len(p) == 0 || p[0] != '/' {
		return ""
	}
	return p
}
