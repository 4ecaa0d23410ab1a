package mcpclient

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Chromium is where Debian's chromium package puts the browser that
// scripts/playwright-mcp.sh installs and Playwright MCP drives.
const Chromium = "/usr/bin/chromium"

// Playwright returns the configuration of the Playwright MCP server as
// scripts/playwright-mcp.sh installs it under toolsDir (a repository's
// .tools), headless with Debian's chromium, writing its files to outputDir.
// It is a browser server (see ServerConfig.Browser): the model gets
// BrowserTools only, and the browser goes through the address guard.
// Chromium's sandbox is on where ChromiumSandbox says it can run; where it
// cannot, the browser runs with --no-sandbox and the Manager says why when
// it starts the server. It fails, naming what is missing and the script
// that installs it, when the server, its config, chromium or node is not
// there.
func Playwright(toolsDir, outputDir string) (ServerConfig, error) {
	dir := filepath.Join(toolsDir, "playwright-mcp")
	cli := filepath.Join(dir, "node_modules", "@playwright", "mcp", "cli.js")
	config := filepath.Join(dir, "config.json")
	var missing []string
	for _, f := range []string{cli, config, Chromium} {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node")
	}
	if len(missing) > 0 {
		return ServerConfig{}, fmt.Errorf("Playwright MCP is not installed (missing %s): run bash scripts/playwright-mcp.sh", strings.Join(missing, ", "))
	}
	sandbox := "--sandbox"
	if ok, _ := ChromiumSandbox(); !ok {
		sandbox = "--no-sandbox"
	}
	return ServerConfig{
		Name:    "playwright",
		Command: node,
		Args: []string{cli, "--headless", sandbox, "--isolated",
			"--browser", "chromium", "--executable-path", Chromium,
			"--config", config, "--output-dir", outputDir},
		// Never let Playwright fetch a browser of its own.
		Env:     map[string]string{"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"},
		Browser: true,
		Timeout: 60 * time.Second,
	}, nil
}
