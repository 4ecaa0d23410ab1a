package main

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version and commit may be set at build time with
// -ldflags "-X main.version=v1.2.3 -X main.commit=abc..." (make build and the
// release do); otherwise they come from the build information Go records.
var (
	version = "dev"
	commit  = ""
)

// buildVersion is what `sagasu version` prints.
type buildVersion struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

// pseudoCommit is the commit at the end of a pseudo-version
// (v0.0.0-20261125030000-0123456789ab).
var pseudoCommit = regexp.MustCompile(`-(?:0\.)?\d{14}-([0-9a-f]{12})(?:\+incompatible)?$`)

// readVersion combines the -ldflags values with the build information: the
// module version of a `go install …@version` build, or the VCS revision
// stamped into a build from a git checkout.
func readVersion(ldVersion, ldCommit string, bi *debug.BuildInfo) buildVersion {
	v := buildVersion{Version: ldVersion, Commit: ldCommit, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi == nil {
		return v
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	if mv := bi.Main.Version; (v.Version == "" || v.Version == "dev") && mv != "" && mv != "(devel)" {
		v.Version = mv
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if v.Commit == "" {
				v.Commit = s.Value
			}
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	if v.Commit == "" {
		if m := pseudoCommit.FindStringSubmatch(v.Version); m != nil {
			v.Commit = m[1]
		}
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	return v
}

func (v buildVersion) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sagasu %s", v.Version)
	if v.Commit != "" {
		c := v.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		fmt.Fprintf(&b, " (commit %s", c)
		if v.Time != "" {
			fmt.Fprintf(&b, ", %s", v.Time)
		}
		if v.Modified {
			b.WriteString(", with local changes")
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, "\n%s %s/%s\n", v.Go, v.OS, v.Arch)
	return b.String()
}

// appVersion is this build's version, as `sagasu version` prints it.
func appVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return readVersion(version, commit, bi).Version
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print sagasu's version, commit and Go version",
		Long: `Version prints the module version (v1.2.3 for go install …@v1.2.3 and release
builds, dev for a local build), the commit it was built from when known, and
the Go version and platform.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, _ := debug.ReadBuildInfo()
			v := readVersion(version, commit, bi)
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, v)
			}
			_, err = fmt.Fprint(g.stdout, v.String())
			return err
		},
	}
}
