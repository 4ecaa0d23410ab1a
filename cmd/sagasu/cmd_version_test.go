package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

func TestReadVersion(t *testing.T) {
	parse := func(s string) *debug.BuildInfo {
		bi, err := debug.ParseBuildInfo(s)
		if err != nil {
			t.Fatal(err)
		}
		return bi
	}
	cases := []struct {
		name, ldVersion, ldCommit string
		bi                        *debug.BuildInfo
		want                      buildVersion
	}{
		{"go install @version", "dev", "", parse("go\tgo1.26.8\npath\tgithub.com/sagasu-dev/sagasu/cmd/sagasu\nmod\tgithub.com/sagasu-dev/sagasu\tv0.4.0\th1:x=\n"),
			buildVersion{Version: "v0.4.0", Go: "go1.26.8"}},
		{"go install @commit (pseudo-version)", "dev", "", parse("go\tgo1.26.8\npath\tgithub.com/sagasu-dev/sagasu/cmd/sagasu\nmod\tgithub.com/sagasu-dev/sagasu\tv0.4.1-0.20261125030000-0123456789ab\th1:x=\n"),
			buildVersion{Version: "v0.4.1-0.20261125030000-0123456789ab", Commit: "0123456789ab", Go: "go1.26.8"}},
		{"git checkout", "dev", "", parse("go\tgo1.26.8\npath\tgithub.com/sagasu-dev/sagasu/cmd/sagasu\nmod\tgithub.com/sagasu-dev/sagasu\t(devel)\t\nbuild\tvcs=git\nbuild\tvcs.revision=45604dd0123456789abcdef0123456789abcdef0\nbuild\tvcs.time=2026-11-25T03:00:00Z\nbuild\tvcs.modified=true\n"),
			buildVersion{Version: "dev", Commit: "45604dd0123456789abcdef0123456789abcdef0", Time: "2026-11-25T03:00:00Z", Modified: true, Go: "go1.26.8"}},
		{"release (ldflags win)", "v0.5.0", "feedfacecafe", parse("go\tgo1.26.8\npath\tgithub.com/sagasu-dev/sagasu/cmd/sagasu\nmod\tgithub.com/sagasu-dev/sagasu\t(devel)\t\n"),
			buildVersion{Version: "v0.5.0", Commit: "feedfacecafe", Go: "go1.26.8"}},
	}
	for _, tc := range cases {
		got := readVersion(tc.ldVersion, tc.ldCommit, tc.bi)
		got.OS, got.Arch = "", ""
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
	s := readVersion("dev", "", cases[2].bi).String()
	if !strings.Contains(s, "sagasu dev (commit 45604dd01234, 2026-11-25T03:00:00Z, with local changes)") || !strings.Contains(s, "go1.26.8") {
		t.Errorf("printed %q", s)
	}
}

// A binary built with plain `go build` in a git clone names its commit.
// The test clones this repository's HEAD (Go stamps VCS information only
// where .git is a folder, so not in a linked worktree) and builds there.
func TestVersionOfARealGitBuild(t *testing.T) {
	testenv.Short(t, "clones the repository and builds the binary")
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	testenv.Need(t, err == nil, fmt.Sprintf("not a git checkout (the test clones it): %v", err))
	clone := t.TempDir()
	out, err := exec.Command("git", "clone", "--quiet", "--depth=1", "file://"+strings.TrimSpace(string(root)), clone).CombinedOutput()
	testenv.Need(t, err == nil, fmt.Sprintf("git clone: %v\n%s", err, out))
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "sagasu")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/sagasu")
	build.Dir = clone
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	// Go stamps a git build's module version as a pseudo-version of its
	// commit (v0.0.0-20261125034519-1944a5485b69) or its tag.
	head12 := strings.TrimSpace(string(head))[:12]
	want := "(commit " + head12
	if !strings.HasPrefix(string(out), "sagasu v") || !strings.Contains(string(out), head12+" "+want) || !strings.Contains(string(out), "\ngo1.") {
		t.Errorf("sagasu version printed %q, want a version ending in %s, %q and the Go version", out, head12, want)
	}
}
