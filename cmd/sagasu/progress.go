package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/tools"
)

// indexDisplay shows an index run's progress on stderr: on a terminal one
// line redrawn in place, a bar of the chunks done of the chunks known with
// the rate and the time left; otherwise (a log, a CI job) a line every
// lineEvery once the run has taken that long, so that a long embedding run
// never looks hung.
//
// The terminal line is drawn here rather than with a progress-bar library:
// the total grows while sources are read, so the chunks done can meet it
// and pass it again, and a bar that takes reaching its total as the end
// stops drawing for the rest of the run. Reports come a few times a second
// (tools.Index paces them), so each one is drawn whole, count and text
// together.
type indexDisplay struct {
	w         io.Writer
	terminal  bool
	mu        sync.Mutex
	drawn     string    // the line on the terminal, "" when none
	last      time.Time // of the last line written (not a terminal)
	lineEvery time.Duration
	now       func() time.Time
}

const (
	indexLineEvery = 5 * time.Second
	indexBarWidth  = 24
)

func newIndexDisplay(w io.Writer, terminal bool) *indexDisplay {
	d := &indexDisplay{w: w, terminal: terminal, lineEvery: indexLineEvery, now: time.Now}
	d.last = d.now()
	return d
}

// show takes one report.
func (d *indexDisplay) show(p tools.IndexProgress) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.terminal {
		if !p.Final {
			d.draw(barLine(p))
		}
		return
	}
	if now := d.now(); now.Sub(d.last) >= d.lineEvery && !p.Final {
		d.last = now
		fmt.Fprintf(d.w, "indexing: %s\n", p.String())
	}
}

// barLine is the terminal line for p: " 42% |██████    |  embedded
// 134/318 chunks, 6.5 chunks/s, about 28s left"; before any chunk is
// known, only the words.
func barLine(p tools.IndexProgress) string {
	done, total := p.Work()
	if total <= 0 {
		return "indexing: " + p.String()
	}
	frac := min(1, float64(done)/float64(total))
	full := int(frac * indexBarWidth)
	return fmt.Sprintf("%3d%% |%s%s|  %s", int(frac*100),
		strings.Repeat("█", full), strings.Repeat(" ", indexBarWidth-full), p.String())
}

// draw replaces the line on the terminal with line.
func (d *indexDisplay) draw(line string) {
	if line == d.drawn {
		return
	}
	pad := max(0, utf8.RuneCountInString(d.drawn)-utf8.RuneCountInString(line))
	fmt.Fprintf(d.w, "\r%s%s", line, strings.Repeat(" ", pad))
	if pad > 0 {
		fmt.Fprintf(d.w, "\r%s", line)
	}
	d.drawn = line
}

// clear blanks the line on the terminal and returns to its start.
func (d *indexDisplay) clear() {
	if d.drawn != "" {
		fmt.Fprintf(d.w, "\r%s\r", strings.Repeat(" ", utf8.RuneCountInString(d.drawn)))
		d.drawn = ""
	}
}

// logs returns a writer for the log while the display runs: on a terminal
// a log record clears the line, takes a line of its own and the line is
// drawn again under it.
func (d *indexDisplay) logs() io.Writer { return displayLog{d} }

type displayLog struct{ d *indexDisplay }

func (l displayLog) Write(p []byte) (int, error) {
	d := l.d
	d.mu.Lock()
	defer d.mu.Unlock()
	line := d.drawn
	d.clear()
	n, err := d.w.Write(p)
	if line != "" {
		d.draw(line)
	}
	return n, err
}

// finish ends the display: the terminal line is cleared, for the report
// that follows.
func (d *indexDisplay) finish() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clear()
}
