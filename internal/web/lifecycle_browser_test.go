package web_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrowserLifecycle: in chromium, the page exports a chat thread as
// Markdown and an agent run as JSON (real downloads), and deletes each
// after its confirmation, leaving the lists empty with no console error.
func TestBrowserLifecycle(t *testing.T) {
	node, modules := browserTools(t)
	docs := writeDocs(t, filepath.Join(t.TempDir(), "docs"))
	base := serveIndexed(t, docs)
	run := exec.Command(node, filepath.Join("testdata", "lifecycle.mjs"), base, t.TempDir(), "How do I rotate the API keys?", "understand how to rotate the API keys")
	run.Env = append(run.Environ(), "SAGASU_WEB_TEST_MODULES="+modules)
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	runErr := run.Run()
	var rep struct {
		Errors                      []string
		Dialogs                     []string
		Failure                     string
		ThreadFile, RunFile         string
		ThreadMarkdown, RunTitle    string
		ThreadsBefore, ThreadsAfter int
		RunsBefore, RunsAfter       int
		RunEvents                   int
		RunViewEmpty                bool
	}
	if err := json.Unmarshal(reportLine(stdout.String()), &rep); err != nil {
		t.Fatalf("lifecycle.mjs: %v (%v)\nstdout: %s\nstderr: %s", err, runErr, stdout.String(), stderr.String())
	}
	if rep.Failure != "" || runErr != nil {
		t.Fatalf("lifecycle.mjs failed: %s (%v)\n%+v\nstderr: %s", rep.Failure, runErr, rep, stderr.String())
	}
	t.Logf("%+v", rep)
	if !strings.HasPrefix(rep.ThreadFile, "chat-") || !strings.HasSuffix(rep.ThreadFile, ".md") || !strings.Contains(rep.ThreadMarkdown, "## 1. How do I rotate the API keys?") {
		t.Errorf("thread export: %s\n%s", rep.ThreadFile, rep.ThreadMarkdown)
	}
	if rep.ThreadsBefore != 1 || rep.ThreadsAfter != 0 {
		t.Errorf("threads listed before and after the delete: %d, %d", rep.ThreadsBefore, rep.ThreadsAfter)
	}
	if !strings.HasSuffix(rep.RunFile, ".json") || rep.RunTitle != "understand how to rotate the API keys" || rep.RunEvents == 0 {
		t.Errorf("run export: %s %q with %d events", rep.RunFile, rep.RunTitle, rep.RunEvents)
	}
	if rep.RunsBefore != 1 || rep.RunsAfter != 0 || !rep.RunViewEmpty {
		t.Errorf("runs listed before and after the delete: %d, %d (view emptied: %v)", rep.RunsBefore, rep.RunsAfter, rep.RunViewEmpty)
	}
	if len(rep.Dialogs) != 2 {
		t.Errorf("confirmations asked: %q, want one per delete", rep.Dialogs)
	}
	if len(rep.Errors) > 0 {
		t.Errorf("console errors: %q", rep.Errors)
	}
}

// reportLine is the last line a browser script printed: its JSON report.
func reportLine(stdout string) []byte {
	line := strings.TrimSpace(stdout)
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	return []byte(line)
}
