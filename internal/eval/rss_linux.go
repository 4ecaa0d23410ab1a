//go:build linux

package eval

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// peakRSSMB is the process's peak resident set size in MB (0 where unknown).
// After resetPeakRSS it is the peak since the reset.
func peakRSSMB() float64 {
	if kb := statusKB("VmHWM:"); kb > 0 {
		return float64(kb) * 1024 / 1e6
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) * 1024 / 1e6 // Linux reports kilobytes
}

// cpuSeconds is the CPU time (user and system) the process has used.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// rssMB is the process's resident set size now, in MB (0 where unknown).
func rssMB() float64 { return float64(statusKB("VmRSS:")) * 1024 / 1e6 }

// resetPeakRSS starts peakRSSMB counting again from the current resident
// size (Linux's clear_refs 5), so that one phase's peak is told from an
// earlier one's. It reports whether the kernel allowed it.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// statusKB reads one "Name: N kB" line of /proc/self/status (0 when absent).
func statusKB(name string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	i := bytes.Index(b, []byte(name))
	if i < 0 {
		return 0
	}
	line := b[i+len(name):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(line), []byte("kB")))), 10, 64)
	if err != nil {
		return 0
	}
	return v
}
