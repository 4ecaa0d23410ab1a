package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestDoctorJSONIsOneDocument: a failing check (no index here) makes
// `doctor --json` exit non-zero with its report as the one JSON document on
// stdout (no error object after it), and the error on stderr; another
// command's failure with --json still prints its error object.
func TestDoctorJSONIsOneDocument(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := sagasu(t, dir, "", "doctor", "--json", "--timeout", "5s")
	if code == 0 {
		t.Fatalf("doctor without an index exited 0:\n%s", out)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var report map[string]any
	if err := dec.Decode(&report); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	var more any
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		t.Fatalf("stdout holds a second JSON document after the report: %v\n%s", more, out)
	}
	if report["index"] == nil || report["error"] != nil {
		t.Errorf("the document is not the report: %s", out)
	}
	if !strings.Contains(errs, "does not work") {
		t.Errorf("stderr does not say the check failed: %q", errs)
	}
	code, out, _ = sagasu(t, dir, "", "loop", "--json", "--goal", "x", "--max-iterations", "0")
	var obj map[string]any
	if code == 0 || json.NewDecoder(bytes.NewBufferString(out)).Decode(&obj) != nil || obj["error"] == nil {
		t.Errorf("a usage error with --json: exit %d, stdout %q; want its error object", code, out)
	}
}

// TestDoctorAdvisesWhatTheBinaryHas: with no embedder and no language
// model, doctor says how to get them with sagasu itself, not with a script
// of the source tree a user of the binary alone does not have.
func TestDoctorAdvisesWhatTheBinaryHas(t *testing.T) {
	dir := t.TempDir()
	_, out, _ := sagasu(t, dir, "", "doctor", "--timeout", "5s")
	if strings.Contains(out, "scripts/") || !strings.Contains(out, "sagasu model pull") {
		t.Errorf("doctor's advice names a script, or not sagasu model pull:\n%s", out)
	}
}
