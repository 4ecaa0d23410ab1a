package main

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// The SBOM of a real sagasu binary, cross-built for another platform,
// lists every module Go recorded in it, with its version and package URL,
// in CycloneDX's shape.
func TestSBOMOfARealBinary(t *testing.T) {
	testenv.Short(t, "builds sagasu")
	exe := filepath.Join(t.TempDir(), "sagasu.exe")
	build := exec.Command("go", "build", "-trimpath", "-o", exe, "../../cmd/sagasu")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=windows", "GOARCH=arm64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bi, err := buildinfo.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	at := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	if err := write(&buf, exe, "v1.2.3", at); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["bomFormat"] != "CycloneDX" || doc["specVersion"] != "1.5" || !strings.HasPrefix(doc["serialNumber"].(string), "urn:uuid:") {
		t.Errorf("header %v %v %v", doc["bomFormat"], doc["specVersion"], doc["serialNumber"])
	}
	meta := doc["metadata"].(map[string]any)
	if meta["timestamp"] != "2026-11-25T00:00:00Z" || meta["component"].(map[string]any)["version"] != "v1.2.3" {
		t.Errorf("metadata %v", meta)
	}
	comps := doc["components"].([]any)
	if len(bi.Deps) == 0 || len(comps) != len(bi.Deps) {
		t.Fatalf("%d components for %d modules", len(comps), len(bi.Deps))
	}
	seen := map[string]bool{}
	for _, c := range comps {
		m := c.(map[string]any)
		seen[m["purl"].(string)] = true
	}
	for _, d := range bi.Deps {
		if d.Replace == nil && !seen["pkg:golang/"+d.Path+"@"+d.Version] {
			t.Errorf("module %s@%s missing", d.Path, d.Version)
		}
	}
	var again bytes.Buffer
	_ = write(&again, exe, "v1.2.3", at)
	if again.String() != buf.String() {
		t.Error("the same binary gave two different documents")
	}
}
