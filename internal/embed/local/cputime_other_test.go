//go:build !unix

package local

import "time"

func cpuTime() time.Duration { return 0 }
