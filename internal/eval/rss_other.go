//go:build !linux && !darwin

package eval

// peakRSSMB is unknown here: benchmarks print the sampled peak only.
func peakRSSMB() float64 { return 0 }

// cpuSeconds is unknown here.
func cpuSeconds() float64 { return 0 }

// rssMB is unknown here.
func rssMB() float64 { return 0 }

// resetPeakRSS is not possible here.
func resetPeakRSS() bool { return false }
