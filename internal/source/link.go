package source

import (
	"fmt"
	"path/filepath"
	"strings"
)

// followLink says why a walk of the folder base (canonical) does not read
// the symbolic link to a file at osPath, or nil when it may: the link must
// lead to a file inside base, and neither that file nor a folder on the
// way to it from base may be hidden (a dotfile or dot-folder). A cloned
// repository can ship "docs/setup.md -> ../../.ssh/id_rsa" or
// "env.txt -> .env"; what the walk reads goes into an index that the page,
// MCP clients and an embedder's server read. The user reads such a file by
// naming it as an input.
func followLink(base, osPath string) error {
	abs, err := filepath.Abs(osPath)
	if err != nil {
		return fmt.Errorf("symbolic link cannot be resolved: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("symbolic link cannot be resolved: %w", err)
	}
	rel, err := filepath.Rel(base, real)
	if base == "" || err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("symbolic link leads outside the folder being indexed (to %s); name the file as an input to index it", real)
	}
	for _, seg := range strings.Split(rel, string(filepath.Separator)) {
		if strings.HasPrefix(seg, ".") && seg != "." && seg != ".." {
			return fmt.Errorf("symbolic link leads to a dotfile or into a dot-folder (%s), which often holds keys and secrets; name the file as an input to index it", filepath.ToSlash(rel))
		}
	}
	return nil
}
