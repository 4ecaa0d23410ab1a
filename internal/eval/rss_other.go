//go:build !linux && !darwin

package eval

// peakRSSMB is unknown here: benchmarks print the sampled peak only.
func peakRSSMB() float64 { return 0 }
