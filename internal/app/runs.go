package app

import (
	"fmt"
	"time"

	"github.com/sagasu-dev/sagasu/internal/runs"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// RunsConfig is the retention of the run log (runs.keep_days, runs.keep).
// A project file may not set it untrusted: a prune would delete by it.
type RunsConfig struct {
	// KeepDays prunes runs not updated for more days than this (0: no age
	// limit).
	KeepDays int `koanf:"keep_days" trust:"sets how old agent runs and chat threads may get before a prune deletes them"`
	// Keep prunes runs beyond the newest Keep of each kind (0: no count
	// limit).
	Keep int `koanf:"keep" trust:"sets how many agent runs and chat threads a prune keeps"`
}

func (c RunsConfig) validate() error {
	if c.KeepDays < 0 || c.Keep < 0 {
		return fmt.Errorf("runs.keep_days %d and runs.keep %d: set days and a count of runs to keep, or 0 for no limit", c.KeepDays, c.Keep)
	}
	return nil
}

// Retention is the configured retention rule (the zero Retention when
// none is set).
func (c RunsConfig) Retention() store.Retention {
	return store.Retention{OlderThan: time.Duration(c.KeepDays) * 24 * time.Hour, Keep: c.Keep}
}

// RunOps returns the lifecycle operations over the run log of st (the
// configured index) with the configured retention; busy reports the runs
// this process drives (nil: none).
func (a *App) RunOps(st store.Store, busy func(id string) bool) *runs.Ops {
	rt := &Runtime{Store: st, app: a}
	return runs.New(runs.Options{Store: st, AgentReport: rt.RunReport, Busy: busy, Retention: a.Config.Runs.Retention()})
}
