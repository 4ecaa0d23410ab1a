package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// Off a terminal, a long run writes a line every few seconds with the
// chunks embedded of the total, the rate and the time left; a short one
// writes nothing.
func TestIndexDisplayLines(t *testing.T) {
	var out bytes.Buffer
	d := newIndexDisplay(&out, false)
	clock := time.Unix(0, 0)
	d.now = func() time.Time { return clock }
	d.last = clock
	for i := range 30 {
		clock = clock.Add(time.Second)
		d.show(tools.IndexProgress{Progress: index.Progress{Read: 40, Made: 600, Embedding: true, Embedded: 20 * i, Working: time.Duration(i) * time.Second}})
	}
	d.show(tools.IndexProgress{Progress: index.Progress{Read: 40, Made: 600, Embedding: true, Embedded: 600}, Final: true})
	d.finish()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines over 30 s, want one every 5 s:\n%s", len(lines), out.String())
	}
	if want := "indexing: embedded 80/600 chunks, 20.0 chunks/s, about 26s left"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}

	out.Reset()
	d = newIndexDisplay(&out, false)
	d.show(tools.IndexProgress{Progress: index.Progress{Read: 1, Made: 3, Chunks: 3}})
	if out.Len() != 0 {
		t.Errorf("a run shorter than %s wrote %q", indexLineEvery, out.String())
	}
}

// screenLines is what a terminal shows of out, line by line: "\r"
// returns to the start of the line and later characters overwrite
// earlier ones.
func screenLines(out string) []string {
	var lines []string
	var line []rune
	col := 0
	for _, r := range out {
		switch r {
		case '\r':
			col = 0
		case '\n':
			lines = append(lines, strings.TrimRight(string(line), " "))
			line, col = nil, 0
		default:
			if col < len(line) {
				line[col] = r
			} else {
				line = append(line, r)
			}
			col++
		}
	}
	return append(lines, strings.TrimRight(string(line), " "))
}

// screen is the last line of screenLines(out): the one being redrawn.
func screen(out string) string {
	lines := screenLines(out)
	return lines[len(lines)-1]
}

// On a terminal the line shows, after every report, the chunks done of the
// chunks known with the matching bar, also after the chunks done met a
// total that then grew (sources still being read), and is cleared at the
// end for the report.
func TestIndexDisplayTerminal(t *testing.T) {
	var out bytes.Buffer
	d := newIndexDisplay(&out, true)
	steps := []index.Progress{
		{Read: 1, Reading: true, Embedding: true},
		{Read: 1, Made: 5, Reading: true, Embedding: true},
		{Read: 1, Made: 5, Embedded: 5, Reading: true, Embedding: true, Working: time.Second},
		{Read: 34, Made: 318, Embedded: 5, Embedding: true, Working: 2 * time.Second},
		{Read: 34, Made: 318, Embedded: 160, Embedding: true, Working: 25 * time.Second},
		{Read: 34, Made: 318, Embedded: 304, Embedding: true, Working: 42 * time.Second},
	}
	want := []string{
		"indexing: read 1 source(s)",
		"  0% |                        |  embedded 0/5+ chunks (reading: 1 source(s) so far)",
		"100% |████████████████████████|  embedded 5/5+ chunks (reading: 1 source(s) so far)",
		"  1% |                        |  embedded 5/318 chunks, 2.5 chunks/s, about 2m05s left",
		" 50% |████████████            |  embedded 160/318 chunks, 6.4 chunks/s, about 25s left",
		" 95% |██████████████████████  |  embedded 304/318 chunks, 7.2 chunks/s, about 2s left",
	}
	for i, p := range steps {
		d.show(tools.IndexProgress{Progress: p})
		if got := screen(out.String()); got != want[i] {
			t.Errorf("after report %d the terminal shows\n%q, want\n%q", i, got, want[i])
		}
	}
	d.show(tools.IndexProgress{Progress: index.Progress{Read: 34, Made: 318, Embedded: 318, Embedding: true}, Final: true})
	d.finish()
	if got := screen(out.String()); got != "" {
		t.Errorf("after the run the terminal shows %q, want the line cleared", got)
	}
}

// A warning logged while the bar is on a terminal gets a line of its own,
// whole, and the bar is drawn again under it.
func TestIndexDisplayLogsAboveTheBar(t *testing.T) {
	var out bytes.Buffer
	d := newIndexDisplay(&out, true)
	p := index.Progress{Read: 34, Made: 318, Embedded: 318, Embedding: true}
	d.show(tools.IndexProgress{Progress: p})
	bar := screen(out.String())
	warning := `level=WARN msg="embedder local/all-MiniLM-L6-v2 reads Japanese poorly"`
	if _, err := d.logs().Write([]byte(warning + "\n")); err != nil {
		t.Fatal(err)
	}
	lines := screenLines(out.String())
	if len(lines) != 2 || lines[0] != warning || lines[1] != bar {
		t.Errorf("the terminal shows %q, want the warning on its own line, then the bar %q", lines, bar)
	}
	d.finish()
	if got := screenLines(out.String()); len(got) != 2 || got[0] != warning || got[1] != "" {
		t.Errorf("after the run the terminal shows %q, want the warning and a cleared line", got)
	}
}
