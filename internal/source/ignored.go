package source

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/glob"
	"github.com/sagasu-dev/sagasu/internal/ignore"
)

// rules reads the ignore rules of the folder canon, about to be walked.
func (w *walker) rules(canon string) error {
	w.ign, w.ignBase = nil, canon
	if w.opt.NoIgnore {
		return nil
	}
	t, err := ignore.New(canon, ignore.Options{GlobalExcludes: w.opt.GlobalExcludes, Top: w.root})
	if err != nil {
		return err
	}
	w.ign = t
	return nil
}

// leftOut reports an entry of a walked folder that Options.Only does not
// ask for, or that the ignore files leave out (reported to skip when the
// glob being matched, if any, would have taken it). Dot-entries and
// node_modules are left to the default rules, which skip them quietly.
func (w *walker) leftOut(name, canon, given string, isDir bool, g *pattern) bool {
	if w.opt.Only != nil && !w.opt.Only(canon, isDir) {
		return true
	}
	if w.ign == nil || strings.HasPrefix(name, ".") || (isDir && name == "node_modules") {
		return false
	}
	rel, ok := within(w.ignBase, canon)
	if !ok || rel == "." {
		return false
	}
	m := w.ign.Match(filepath.ToSlash(rel), isDir)
	if !m.Ignored {
		return false
	}
	if g == nil || (isDir && glob.MatchBelow(g.text, given)) || (!isDir && glob.Match(g.text, given)) {
		uri := w.uri(canon)
		w.log.Debug("skipped", "path", uri, "reason", "ignore file", "pattern", m.String())
		w.skip(Skip{Path: uri, Reason: SkipIgnoreFile, Err: fmt.Errorf("left out by %s", m)})
	}
	return true
}
