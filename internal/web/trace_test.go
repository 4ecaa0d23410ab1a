package web

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTraceWordsMatchTheAgents: the page says sagasu's own trace words in
// the reader's language by recognising their English wording (trace.js).
// Each wording it knows must still be in the Go code that writes it, so a
// message reworded there fails here instead of showing untranslated in a
// Japanese page.
func TestTraceWordsMatchTheAgents(t *testing.T) {
	b, err := assets.ReadFile("assets/trace.js")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	var code strings.Builder
	for _, dir := range []string{"../agent", "../tools", "../loop"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			code.Write(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	goSrc := code.String()
	unquote := strings.NewReplacer(`\\`, `\`, `\'`, `'`, `\"`, `"`)
	var froms []string
	for _, m := range regexp.MustCompile(`from: (?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")`).FindAllStringSubmatch(src, -1) {
		froms = append(froms, unquote.Replace(m[1]+m[2]))
	}
	if list := regexp.MustCompile(`observationFrom = \[(.*)\];`).FindStringSubmatch(src); list != nil {
		for _, m := range regexp.MustCompile(`'((?:[^'\\]|\\.)*)'`).FindAllStringSubmatch(list[1], -1) {
			froms = append(froms, unquote.Replace(m[1]))
		}
	}
	if len(froms) < 60 {
		t.Fatalf("found %d wordings in trace.js; its layout changed", len(froms))
	}
	for _, f := range froms {
		if !strings.Contains(goSrc, f) {
			t.Errorf("trace.js knows the wording %s, which no Go code under internal/agent, internal/tools or internal/loop writes any more: update its pattern and messages", f)
		}
	}
}
