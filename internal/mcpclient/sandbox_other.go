//go:build !linux

package mcpclient

// ChromiumSandbox reports whether chromium's sandbox can run for this
// process. Outside Linux, chromium's sandbox needs nothing of the system
// that this process could lack.
func ChromiumSandbox() (ok bool, why string) { return true, "" }
