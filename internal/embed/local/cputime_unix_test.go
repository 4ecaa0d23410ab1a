//go:build unix

package local

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used, so that benchmarks can
// report work per CPU-second, which a machine shared with other jobs
// disturbs far less than wall-clock time.
func cpuTime() time.Duration {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
