package main

import (
	"encoding/json"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/sagasu-dev/sagasu/internal/clip"
)

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// isTerminal reports whether w is an interactive terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// snippet shortens text to n runes on one line for human output.
func snippet(text string, n int) string { return clip.Line(text, n) }
