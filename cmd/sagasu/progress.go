package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/sagasu-dev/sagasu/internal/tools"
)

// indexDisplay shows an index run's progress on stderr: on a terminal a bar
// of the chunks done of the chunks known, with the rate and the time left;
// otherwise (a log, a CI job) a line every lineEvery once the run has taken
// that long, so that a long embedding run never looks hung.
type indexDisplay struct {
	w         io.Writer
	bar       *progressbar.ProgressBar // nil when not a terminal
	mu        sync.Mutex
	last      time.Time // of the last line written (not a terminal)
	lineEvery time.Duration
	now       func() time.Time
}

const indexLineEvery = 5 * time.Second

func newIndexDisplay(w io.Writer, terminal bool) *indexDisplay {
	d := &indexDisplay{w: w, lineEvery: indexLineEvery, now: time.Now}
	d.last = d.now()
	if terminal {
		d.bar = progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("indexing"),
			progressbar.OptionShowDescriptionAtLineEnd(),
			progressbar.OptionSetWidth(24),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionSetElapsedTime(false),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond),
		)
	}
	return d
}

// show takes one report.
func (d *indexDisplay) show(p tools.IndexProgress) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bar != nil {
		done, total := p.Work()
		if total > 0 {
			d.bar.ChangeMax(total)
			_ = d.bar.Set(done)
		}
		d.bar.Describe(p.String())
		return
	}
	if now := d.now(); now.Sub(d.last) >= d.lineEvery && !p.Final {
		d.last = now
		fmt.Fprintf(d.w, "indexing: %s\n", p.String())
	}
}

// finish ends the display (the bar is cleared: the report follows).
func (d *indexDisplay) finish() {
	if d.bar != nil {
		_ = d.bar.Finish()
	}
}
