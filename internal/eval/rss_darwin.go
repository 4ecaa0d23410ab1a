//go:build darwin

package eval

import "syscall"

// peakRSSMB is the process's peak resident set size in MB (0 where unknown).
func peakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1e6 // macOS reports bytes
}

// cpuSeconds is the CPU time (user and system) the process has used.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// rssMB is not read on macOS: the peak stands in for it.
func rssMB() float64 { return 0 }

// resetPeakRSS is not possible on macOS.
func resetPeakRSS() bool { return false }
