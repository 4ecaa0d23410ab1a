package app

import (
	"runtime/debug"
	"testing"
)

func TestServingGCLowersTheTargetUnlessGOGCIsSet(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	ServingGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != ServingGCPercent {
		t.Errorf("GC target %d after ServingGC, want %d", got, ServingGCPercent)
	}
	ServingGC(func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC target %d with GOGC set, want it left at 100", got)
	}
}
