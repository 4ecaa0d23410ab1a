package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONErrors: with --json an error is printed as JSON on stdout (and in
// words on stderr), with a non-zero exit.
func TestJSONErrors(t *testing.T) {
	dir := docsFixture(t)
	mustRun(t, dir, "index", "docs")
	for _, tc := range []struct {
		args     []string
		code     int
		wantCode string
		wantMsg  string
	}{
		{[]string{"--json", "query", "--type", "nonsense", "x"}, exitError, "error", `type "nonsense"`},
		{[]string{"query", "--json", "--k", "0", "x"}, exitUsage, "usage", "k"},
		{[]string{"--json", "--db", "nowhere/x.db", "list"}, exitError, "error", "no index"},
		{[]string{"--json", "ask", " "}, exitUsage, "usage", "question is empty"},
	} {
		code, stdout, stderr := sagasu(t, dir, "", tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %s)", tc.args, code, tc.code, stderr)
		}
		var out struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Errorf("%v: stdout is not a JSON error: %q", tc.args, stdout)
			continue
		}
		if out.Error.Code != tc.wantCode || !strings.Contains(out.Error.Message, tc.wantMsg) {
			t.Errorf("%v: %+v, want code %s and a message with %q", tc.args, out.Error, tc.wantCode, tc.wantMsg)
		}
		if !strings.Contains(stderr, tc.wantMsg) {
			t.Errorf("%v: stderr %q does not say it", tc.args, stderr)
		}
	}
}
