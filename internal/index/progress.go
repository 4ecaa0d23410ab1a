package index

import (
	"fmt"
	"sync"
	"time"
)

// Progress reports how far a run is: the counts every face shows (the
// terminal, the page's Index tab, MCP progress notifications), with the
// rate and the time left worked out once, here.
type Progress struct {
	Read      int   // sources read
	Bytes     int64 // bytes read
	Written   int   // sources written (added or updated)
	Unchanged int   // sources read and found unchanged
	Chunks    int   // chunks written
	// Made counts the chunks of the new and changed sources read so far:
	// the work of the run. It grows while Reading.
	Made int
	// Embedding is set when the run embeds its chunks; Embedded then
	// counts the chunks whose vectors are ready (embedded, or reused from
	// the index).
	Embedding bool
	Embedded  int
	// Reading is set while sources are still being read.
	Reading bool
	// Elapsed is the time since the run started; Working the time since
	// its first chunk was made, over which the rate is measured.
	Elapsed, Working time.Duration
}

// Work returns the chunks done and the chunks to do as far as they are
// known: embedded of made when the run embeds, written of made when it
// does not.
func (p Progress) Work() (done, total int) {
	if p.Embedding {
		return p.Embedded, p.Made
	}
	return p.Chunks, p.Made
}

// Rate returns the chunks done per second so far, 0 before any is done.
func (p Progress) Rate() float64 {
	done, _ := p.Work()
	if done == 0 || p.Working <= 0 {
		return 0
	}
	return float64(done) / p.Working.Seconds()
}

// Left returns the time the chunks known so far will take at the rate so
// far. ok is false while no chunk is done; while sources are still read
// the total may grow, and so may the time.
func (p Progress) Left() (left time.Duration, ok bool) {
	done, total := p.Work()
	rate := p.Rate()
	if rate == 0 {
		return 0, false
	}
	return time.Duration(float64(total-done) / rate * float64(time.Second)), true
}

// String says it for people, e.g. "embedded 120/609 chunks, 13.2/s,
// about 35s left" or "read 12 sources, 340 chunks so far".
func (p Progress) String() string {
	done, total := p.Work()
	if total == 0 {
		if p.Unchanged > 0 && p.Unchanged == p.Read {
			return fmt.Sprintf("read %d source(s), all unchanged", p.Read)
		}
		return fmt.Sprintf("read %d source(s)", p.Read)
	}
	verb := "wrote"
	if p.Embedding {
		verb = "embedded"
	}
	s := fmt.Sprintf("%s %d/%d chunks", verb, done, total)
	if p.Reading {
		s = fmt.Sprintf("%s %d/%d+ chunks (reading: %d source(s) so far)", verb, done, total, p.Read)
	}
	if rate := p.Rate(); rate > 0 && done < total {
		s += ", " + formatRate(rate)
		if left, ok := p.Left(); ok {
			if p.Reading {
				s += ", at least " + formatLeft(left) + " left"
			} else {
				s += ", about " + formatLeft(left) + " left"
			}
		}
	}
	return s
}

func formatRate(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f chunks/s", r)
	case r >= 1:
		return fmt.Sprintf("%.1f chunks/s", r)
	}
	return fmt.Sprintf("%.1f chunks/min", r*60)
}

func formatLeft(d time.Duration) string {
	switch {
	case d < time.Second:
		return "1s"
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// meter keeps a run's Progress and reports every change to it. The
// producer and the writers update it; reports go out one at a time.
type meter struct {
	mu     sync.Mutex
	p      Progress
	start  time.Time
	work   time.Time // when the first chunk was made
	report func(Progress)
	now    func() time.Time
}

func newMeter(report func(Progress), embedding bool) *meter {
	m := &meter{report: report, now: time.Now}
	m.start = m.now()
	m.p.Embedding = embedding
	m.p.Reading = true
	return m
}

// update changes the counts with f and reports them.
func (m *meter) update(f func(p *Progress)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(&m.p)
	now := m.now()
	if m.work.IsZero() && m.p.Made > 0 {
		m.work = now
	}
	m.p.Elapsed = now.Sub(m.start)
	if !m.work.IsZero() {
		m.p.Working = now.Sub(m.work)
	}
	if m.report != nil {
		m.report(m.p)
	}
}

// get returns the counts.
func (m *meter) get() Progress {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.p
}
