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
