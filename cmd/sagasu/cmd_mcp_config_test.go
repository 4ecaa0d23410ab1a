package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/testenv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pelletier/go-toml/v2"
)

// The entry `mcp config --write` merges into a client's file starts a
// working server: the test reads it back and starts exactly that command
// with those arguments, from another folder, as a client would.
func TestMCPConfigWriteStartsAWorkingServer(t *testing.T) {
	testenv.Short(t, "builds the binary")
	bin := buildBinary(t)
	proj := t.TempDir()
	write(t, filepath.Join(proj, "docs", "guide.md"), "# Guide\n\nDeploy with the blue button.\n")
	other := `{"mcpServers": {"browser": {"command": "npx", "args": ["@playwright/mcp"]}}}`
	write(t, filepath.Join(proj, ".cursor", "mcp.json"), other)

	run := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "HOME="+proj)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sagasu %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("index", "docs")
	out := run("mcp", "config", "cursor", "--write")
	if !strings.Contains(out, "added") {
		t.Fatalf("output %q", out)
	}
	data, err := os.ReadFile(filepath.Join(proj, ".cursor", "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.MCPServers["browser"]; !ok {
		t.Errorf("the other server is gone:\n%s", data)
	}
	e := cfg.MCPServers["sagasu"]
	if e.Command != bin {
		t.Errorf("command %q, want the binary %q", e.Command, bin)
	}

	cmd := exec.Command(e.Command, e.Args...)
	cmd.Dir = t.TempDir() // clients start servers from a folder of their choosing
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start %s %v: %v", e.Command, e.Args, err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "sagasu_query", Arguments: map[string]any{"query": "deploy button"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(b), "guide.md") {
		t.Errorf("the configured server did not search the project's index: %s", b)
	}
}

func TestMCPConfigPrintsEachClientAndRefusesSecrets(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := sagasu(t, dir, "", "mcp", "config", "codex", "--root", "docs")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]map[string]map[string]any
	if err := toml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("codex output is not TOML: %v\n%s", err, out)
	}
	args := doc["mcp_servers"]["sagasu"]["args"].([]any)
	wantDB := filepath.Join(dir, ".sagasu", "sagasu.db")
	if !slices.Contains(args, any(wantDB)) || !slices.Contains(args, any(filepath.Join(dir, "docs"))) {
		t.Errorf("args %v: want the absolute index %s and root", args, wantDB)
	}
	if !strings.Contains(errs, filepath.Join(dir, ".codex", "config.toml")) {
		t.Errorf("stderr does not say which file to merge into: %q", errs)
	}
	if _, err := os.Stat(filepath.Join(dir, ".codex")); err == nil {
		t.Error("printing wrote a file")
	}

	code, _, errs = sagasu(t, dir, "", "--db", "postgres://u:secret@127.0.0.1/x", "mcp", "config", "vscode", "--write")
	if code != exitUsage || !strings.Contains(errs, "password") || strings.Contains(errs, "secret") {
		t.Errorf("a DSN with a password: exit %d %q, want a usage error that does not repeat it", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, ".vscode")); err == nil {
		t.Error("a refused config was written")
	}
	code, _, errs = sagasu(t, dir, "", "mcp", "config", "zed")
	if code != exitUsage || !strings.Contains(errs, "claude-desktop") {
		t.Errorf("unknown client: exit %d %q", code, errs)
	}
}

// An untrusted project sagasu.yaml is not handed to the client's server
// with --config, which would trust it by naming it.
func TestMCPConfigLeavesOutAnUntrustedProjectFile(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "sagasu.yaml"), "log_level: warn\n")
	code, out, errs := sagasu(t, dir, "", "mcp", "config", "claude-desktop")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "--config") || !strings.Contains(errs, "not trusted") {
		t.Errorf("untrusted project file passed on or not mentioned:\n%s\n%s", out, errs)
	}
	mustRun(t, dir, "trust")
	code, out, _ = sagasu(t, dir, "", "mcp", "config", "claude-desktop")
	if code != 0 || !strings.Contains(out, filepath.Join(dir, "sagasu.yaml")) {
		t.Errorf("a trusted project file is not passed with --config:\n%s", out)
	}
}
