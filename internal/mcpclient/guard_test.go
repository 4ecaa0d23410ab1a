package mcpclient

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolAllowList: a server's tools list keeps the tools the model sees
// to those named; a call to another one is refused before it reaches the
// server, by function name or by tool name.
func TestToolAllowList(t *testing.T) {
	limited := stdioConfig(t, "tools", 20*time.Second)
	limited.Tools = []string{"echo", "click"}
	all := stdioConfig(t, "tools", 20*time.Second)
	all.Tools = []string{"*"}
	m := newManager(t, map[string]ServerConfig{"limited": limited, "all": all}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	tools, err := m.ServerTools(ctx, "limited")
	require.NoError(t, err)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	assert.ElementsMatch(t, []string{"echo", "click"}, names, "only the listed tools are shown")

	r, err := call(t, m, "limited", "echo", `{"text":"allowed"}`)
	require.NoError(t, err)
	assert.Equal(t, "allowed", r.Text)

	_, err = call(t, m, "limited", "env", "")
	require.Error(t, err, "a tool outside the list is refused")
	assert.Contains(t, err.Error(), `"env"`)
	assert.Contains(t, err.Error(), "mcp_servers.limited.tools")
	_, err = m.CallFunc(ctx, "limited__env", nil)
	require.Error(t, err, "its function name is not callable either")

	tools, err = m.ServerTools(ctx, "all")
	require.NoError(t, err)
	assert.Greater(t, len(tools), 5, `"*" allows every tool`)
}

// TestBrowserServerDefaultsToTheSafeTools: a browser server without a tools
// list offers the safe browsing set only.
func TestBrowserServerDefaultsToTheSafeTools(t *testing.T) {
	cfg := ServerConfig{Command: "x", Browser: true}
	assert.Equal(t, BrowserTools, cfg.allowedTools())
	assert.True(t, cfg.allows("browser_navigate"))
	for _, unsafe := range []string{"browser_evaluate", "browser_run_code_unsafe", "browser_file_upload", "browser_network_request", "browser_tabs"} {
		assert.False(t, cfg.allows(unsafe), unsafe)
	}
	assert.True(t, ServerConfig{Command: "x"}.allows("anything"), "other servers keep all their tools unless listed")
	assert.False(t, ServerConfig{Command: "x", Tools: []string{"echo"}}.allows("anything"))
}

// TestChildEnvironmentIsMinimal: a stdio server sees PATH, HOME and the
// like, the variables its config sets or names, and nothing else: no API
// key, GitHub token or sagasu token of the parent.
func TestChildEnvironmentIsMinimal(t *testing.T) {
	secrets := map[string]string{
		"OPENAI_API_KEY":        "sk-must-not-leak",
		"GEMINI_API_KEY":        "gm-must-not-leak",
		"ANTHROPIC_API_KEY":     "an-must-not-leak",
		"GITHUB_TOKEN":          "ghp-must-not-leak",
		"SAGASU_TOKEN":          "sg-must-not-leak",
		"AWS_SECRET_ACCESS_KEY": "aws-must-not-leak",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("SAGASU_TEST_PASSED_ON", "named in pass_env")
	t.Setenv("LANG", "ja_JP.UTF-8")
	cfg := stdioConfig(t, "tools", 20*time.Second)
	cfg.PassEnv = []string{"SAGASU_TEST_PASSED_ON", "SAGASU_TEST_UNSET"}
	cfg.Env["EXTRA"] = "set by the config"
	m := newManager(t, map[string]ServerConfig{"local": cfg}, Options{})

	r, err := call(t, m, "local", "env", "")
	require.NoError(t, err)
	env := map[string]string{}
	for _, kv := range strings.Split(r.Full, "\n") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k := range secrets {
		assert.NotContains(t, env, k, "the child sees %s", k)
	}
	for _, v := range secrets {
		assert.NotContains(t, r.Full, v)
	}
	assert.Equal(t, os.Getenv("PATH"), env["PATH"])
	assert.Equal(t, os.Getenv("HOME"), env["HOME"])
	assert.Equal(t, "ja_JP.UTF-8", env["LANG"])
	assert.Equal(t, "named in pass_env", env["SAGASU_TEST_PASSED_ON"])
	assert.NotContains(t, env, "SAGASU_TEST_UNSET", "a named variable that is not set stays unset")
	assert.Equal(t, "set by the config", env["EXTRA"])
	assert.Equal(t, "tools", env[serverModeEnv])
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	t.Logf("the child's environment: %s", strings.Join(keys, " "))
}
