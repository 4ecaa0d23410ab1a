// Package mcpconfig writes the entry that tells an MCP client (Claude Code,
// Claude Desktop, VS Code, Cursor, Codex) how to start `sagasu mcp`, and
// merges it into the client's own configuration file without touching the
// other servers or settings there.
package mcpconfig

import (
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
)

// Server is what a client needs to start sagasu as a stdio MCP server.
type Server struct {
	// Name is the key of the entry in the client's server table.
	Name string
	// Command is the absolute path of the sagasu binary.
	Command string
	// Args follow Command ("mcp", "--db", ...).
	Args []string
}

// Format is how a client's configuration file is written.
type Format int

// Formats of the clients' files.
const (
	JSON Format = iota
	TOML
)

// Client describes one MCP client's configuration file: where it lives, the
// key that holds its servers and the shape of one stdio entry. The facts
// come from each client's public documentation (see docs/mcp.md).
type Client struct {
	// ID is the name given on the command line ("claude-code").
	ID string
	// Title is the client's product name.
	Title string
	// Format of the file.
	Format Format
	// Key holds the table of servers ("mcpServers", "servers", "mcp_servers").
	Key string
	// typed entries carry "type": "stdio".
	typed bool
	// path is the default file, given the project folder and the user's
	// environment; Scope says which one it is.
	path  func(project string, env Env) (string, error)
	Scope string
	// InProject is set when the default file lies in the project folder
	// (which a cloned repository controls).
	InProject bool
}

// Env is what the default paths depend on.
type Env struct {
	GOOS    string
	Home    string
	AppData string // %APPDATA% on Windows
	// CodexHome is $CODEX_HOME ("" for ~/.codex).
	CodexHome string
}

// HostEnv reads Env for this machine from the variables in getenv.
func HostEnv(home string, getenv func(string) string) Env {
	return Env{GOOS: runtime.GOOS, Home: home, AppData: getenv("APPDATA"), CodexHome: getenv("CODEX_HOME")}
}

// Clients lists the supported clients in the order they are documented.
var clients = []Client{
	{
		ID: "claude-code", InProject: true, Title: "Claude Code", Format: JSON, Key: "mcpServers", typed: true,
		Scope: "the project's .mcp.json (project scope, shared with the repository)",
		path: func(project string, _ Env) (string, error) {
			return filepath.Join(project, ".mcp.json"), nil
		},
	},
	{
		ID: "claude-desktop", Title: "Claude Desktop", Format: JSON, Key: "mcpServers",
		Scope: "claude_desktop_config.json in the user's application settings",
		path: func(_ string, e Env) (string, error) {
			switch e.GOOS {
			case "darwin":
				return filepath.Join(e.Home, "Library", "Application Support", "Claude", "claude_desktop_config.json"), nil
			case "windows":
				if e.AppData == "" {
					return "", fmt.Errorf("claude-desktop: %%APPDATA%% is not set; name the file with --file")
				}
				return filepath.Join(e.AppData, "Claude", "claude_desktop_config.json"), nil
			default:
				return filepath.Join(e.Home, ".config", "Claude", "claude_desktop_config.json"), nil
			}
		},
	},
	{
		ID: "vscode", InProject: true, Title: "VS Code", Format: JSON, Key: "servers", typed: true,
		Scope: "the workspace's .vscode/mcp.json",
		path: func(project string, _ Env) (string, error) {
			return filepath.Join(project, ".vscode", "mcp.json"), nil
		},
	},
	{
		ID: "cursor", InProject: true, Title: "Cursor", Format: JSON, Key: "mcpServers",
		Scope: "the project's .cursor/mcp.json",
		path: func(project string, _ Env) (string, error) {
			return filepath.Join(project, ".cursor", "mcp.json"), nil
		},
	},
	{
		ID: "codex", Title: "Codex", Format: TOML, Key: "mcp_servers",
		Scope: "the user's ~/.codex/config.toml ($CODEX_HOME/config.toml)",
		path: func(_ string, e Env) (string, error) {
			if e.CodexHome != "" {
				return filepath.Join(e.CodexHome, "config.toml"), nil
			}
			return filepath.Join(e.Home, ".codex", "config.toml"), nil
		},
	},
}

// Clients returns the supported clients.
func Clients() []Client { return slices.Clone(clients) }

// IDs returns the clients' command-line names.
func IDs() []string {
	ids := make([]string, len(clients))
	for i, c := range clients {
		ids[i] = c.ID
	}
	return ids
}

// Lookup finds a client by its ID (a few common spellings are accepted).
func Lookup(id string) (Client, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	switch id {
	case "claude", "claudecode":
		id = "claude-code"
	case "claude-desktop-app", "claudedesktop":
		id = "claude-desktop"
	case "code", "vs-code", "vscode-insiders":
		id = "vscode"
	}
	for _, c := range clients {
		if c.ID == id {
			return c, nil
		}
	}
	return Client{}, fmt.Errorf("unknown MCP client %q; give one of %s", id, strings.Join(IDs(), ", "))
}

// DefaultPath is the file --write changes when no --file is given.
func (c Client) DefaultPath(project string, env Env) (string, error) { return c.path(project, env) }

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Check reports what is wrong with s before anything is written.
func (s Server) Check() error {
	if !namePattern.MatchString(s.Name) {
		return fmt.Errorf("server name %q: use 1 to 64 letters, digits, '-' or '_' (every client accepts those)", s.Name)
	}
	if !filepath.IsAbs(s.Command) {
		return fmt.Errorf("command %q is not an absolute path: clients start servers from a folder of their choosing", s.Command)
	}
	return nil
}
