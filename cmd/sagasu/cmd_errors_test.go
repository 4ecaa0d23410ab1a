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
		{[]string{"--json", "query", "--type", "nonsense", "x"}, exitUsage, "usage", `"nonsense"`},
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

// TestWrongCommandLinesAreUsageErrors: an unknown command or subcommand,
// or arguments a command does not take, exit 2 with a message naming what
// was wrong and where to look; a group alone still prints its help.
func TestWrongCommandLinesAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, `unknown command "bogus" for "sagasu"`},
		{[]string{"agent", "bogus"}, `unknown command "bogus" for "sagasu agent"`},
		{[]string{"mcp", "bogus"}, `unknown command "bogus" for "sagasu mcp"`},
		{[]string{"cache", "bogus"}, `unknown command "bogus" for "sagasu cache"`},
		{[]string{"info", "extra"}, "sagasu info --help"},
		{[]string{"qurey", "x"}, "did you mean query?"},
	} {
		code, _, stderr := sagasu(t, dir, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
	code, stdout, stderr := sagasu(t, dir, "", "agent")
	if code != exitOK || !strings.Contains(stdout, "Available Commands") {
		t.Errorf("agent alone: exit %d, stdout %q, stderr %q; want its help", code, stdout, stderr)
	}
}
