package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPConfigWriteStaysInTheProject: a clone that plants
// .vscode/mcp.json (or the .vscode folder) as a link to a file of the
// user's does not get that file rewritten by `mcp config vscode --write`.
func TestMCPConfigWriteStaysInTheProject(t *testing.T) {
	const theirs = `{"servers": {"mine": {"type": "stdio", "command": "my-server"}}, "note": "the user's own file"}` + "\n"
	for _, plant := range []string{"file", "folder"} {
		home := t.TempDir()
		proj := filepath.Join(home, "clone")
		victim := filepath.Join(home, "elsewhere", "mcp.json")
		write(t, victim, theirs)
		if err := os.MkdirAll(proj, 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if plant == "file" {
			if err = os.MkdirAll(filepath.Join(proj, ".vscode"), 0o755); err == nil {
				err = os.Symlink(victim, filepath.Join(proj, ".vscode", "mcp.json"))
			}
		} else {
			err = os.Symlink(filepath.Dir(victim), filepath.Join(proj, ".vscode"))
		}
		if err != nil {
			t.Fatal(err)
		}
		code, _, errs := sagasu(t, proj, "", "mcp", "config", "vscode", "--write")
		if b, _ := os.ReadFile(victim); string(b) != theirs {
			t.Errorf("linked %s: the file outside the project was rewritten:\n%s", plant, b)
		}
		if code == 0 || !strings.Contains(errs, "outside the project") || !strings.Contains(errs, "--file") {
			t.Errorf("linked %s: exit %d %q, want a refusal saying what to do", plant, code, errs)
		}
	}
	// Named with --file, the user's own file is merged into as before.
	home := t.TempDir()
	victim := filepath.Join(home, "elsewhere", "mcp.json")
	write(t, victim, theirs)
	if code, out, errs := sagasu(t, home, "", "mcp", "config", "vscode", "--write", "--file", victim); code != 0 || !strings.Contains(out, "added") {
		t.Errorf("--file: exit %d %q %q", code, out, errs)
	}
}
