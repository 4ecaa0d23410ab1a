package mcpconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/testenv"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/pelletier/go-toml/v2"
)

func testServer(t *testing.T) Server {
	dir := t.TempDir()
	return Server{
		Name:    "sagasu",
		Command: filepath.Join(dir, "bin", "sagasu"),
		Args:    []string{"mcp", "--db", filepath.Join(dir, "proj", ".sagasu", "sagasu.db"), "--root", filepath.Join(dir, "proj")},
	}
}

// schema loads the client's schema, written from its public docs
// (testdata/schema/*.schema.json say which page).
func schema(t *testing.T, c Client) *jsonschema.Resolved {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "schema", c.ID+".schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s schema: %v", c.ID, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s schema: %v", c.ID, err)
	}
	return rs
}

// decode reads a client's file as generic values, the way the schema sees it.
func decode(t *testing.T, c Client, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	var err error
	if c.Format == TOML {
		err = toml.Unmarshal(data, &v)
	} else {
		err = json.Unmarshal(data, &v)
	}
	if err != nil {
		t.Fatalf("%s output does not parse: %v\n%s", c.ID, err, data)
	}
	return normalize(v).(map[string]any)
}

func entryOf(t *testing.T, c Client, doc map[string]any, name string) map[string]any {
	t.Helper()
	servers, _ := doc[c.Key].(map[string]any)
	e, _ := servers[name].(map[string]any)
	if e == nil {
		t.Fatalf("%s: no %s.%s in %v", c.ID, c.Key, name, doc)
	}
	return e
}

func TestRenderedConfigsMatchEachClientsSchema(t *testing.T) {
	s := testServer(t)
	for _, c := range Clients() {
		t.Run(c.ID, func(t *testing.T) {
			out, err := Render(c, s)
			if err != nil {
				t.Fatal(err)
			}
			doc := decode(t, c, out)
			if err := schema(t, c).Validate(doc); err != nil {
				t.Fatalf("%s schema refuses the output: %v\n%s", c.Title, err, out)
			}
			e := entryOf(t, c, doc, "sagasu")
			if e["command"] != s.Command || !filepath.IsAbs(e["command"].(string)) {
				t.Errorf("command = %v, want the absolute %s", e["command"], s.Command)
			}
			args, _ := json.Marshal(e["args"])
			want, _ := json.Marshal(s.Args)
			if string(args) != string(want) {
				t.Errorf("args = %s, want %s", args, want)
			}
		})
	}
}

// The schemas can fail: each refuses an entry its client would not take.
func TestSchemasRefuseWrongEntries(t *testing.T) {
	bad := map[string]string{
		"claude-code":    `{"mcpServers": {"x": {"type": "stdio", "args": ["a"]}}}`,
		"claude-desktop": `{"mcpServers": {"x": {"url": "http://127.0.0.1/mcp"}}}`,
		"vscode":         `{"servers": {"x": {"command": "/bin/x"}}}`,
		"cursor":         `{"mcpServers": {"x": {"command": "/bin/x", "args": "a b"}}}`,
		"codex":          `{"mcp_servers": {"x": {"args": ["a"]}}}`,
	}
	for _, c := range Clients() {
		var v any
		if err := json.Unmarshal([]byte(bad[c.ID]), &v); err != nil {
			t.Fatal(err)
		}
		if err := schema(t, c).Validate(v); err == nil {
			t.Errorf("%s schema accepts %s", c.ID, bad[c.ID])
		}
	}
}

// existing files with other servers and settings, per client
var existing = map[string]string{
	"claude-code": `{
  "mcpServers": {
    "github": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "x"}}
  },
  "zzz": [1, 2, {"b": 1, "a": 2}]
}`,
	"claude-desktop": `{"globalShortcut": "Ctrl+Space", "mcpServers": {"fs": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"]}}}`,
	"vscode": `{
  "inputs": [{"type": "promptString", "id": "api-key", "description": "API key", "password": true}],
  "servers": {"remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${input:api-key}"}}}
}`,
	"cursor": `{"mcpServers": {"browser": {"command": "npx", "args": ["@playwright/mcp"]}, "docs": {"url": "https://example.com/mcp"}}}`,
	"codex": `# my codex settings
model = "o4-mini"  # keep this comment

[mcp_servers.docs]
command = "docs-mcp"
args = ["--port", "0"]
startup_timeout_sec = 30

[profiles.fast]
model = "gpt-5-mini"
`,
}

func TestMergeKeepsOtherServersAndSettings(t *testing.T) {
	s := testServer(t)
	for _, c := range Clients() {
		t.Run(c.ID, func(t *testing.T) {
			before := decode(t, c, []byte(existing[c.ID]))
			r, err := Merge(c, []byte(existing[c.ID]), s)
			if err != nil {
				t.Fatal(err)
			}
			if r.Action != Added || r.Lossy {
				t.Errorf("action %s lossy %v, want added, not lossy", r.Action, r.Lossy)
			}
			after := decode(t, c, r.Data)
			if err := schema(t, c).Validate(after); err != nil {
				t.Fatalf("schema refuses the merged file: %v\n%s", err, r.Data)
			}
			entryOf(t, c, after, "sagasu")
			delete(after[c.Key].(map[string]any), "sagasu")
			a, _ := json.Marshal(after)
			b, _ := json.Marshal(before)
			if string(a) != string(b) {
				t.Errorf("other settings changed:\nbefore %s\nafter  %s", b, a)
			}
			// A second merge finds nothing to do and returns the bytes as they are.
			again, err := Merge(c, r.Data, s)
			if err != nil || again.Action != Unchanged || string(again.Data) != string(r.Data) {
				t.Errorf("second merge: %v %s, changed %v", err, again.Action, string(again.Data) != string(r.Data))
			}
		})
	}
}

func TestMergeKeepsKeyOrderInJSON(t *testing.T) {
	c, _ := Lookup("claude-code")
	r, err := Merge(c, []byte(existing["claude-code"]), testServer(t))
	if err != nil {
		t.Fatal(err)
	}
	out := string(r.Data)
	if !(strings.Index(out, `"mcpServers"`) < strings.Index(out, `"zzz"`) &&
		strings.Index(out, `"github"`) < strings.Index(out, `"sagasu"`) &&
		strings.Index(out, `"b": 1`) < strings.Index(out, `"a": 2`)) {
		t.Errorf("key order not kept:\n%s", out)
	}
}

func TestMergeUpdatesOwnEntryAndKeepsUserFields(t *testing.T) {
	s := testServer(t)
	json := `{"servers": {"sagasu": {"type": "stdio", "command": "/old/sagasu", "args": ["mcp"], "env": {"SAGASU_EMBEDDER_URL": "http://127.0.0.1:8081/v1"}}}}`
	c, _ := Lookup("vscode")
	r, err := Merge(c, []byte(json), s)
	if err != nil {
		t.Fatal(err)
	}
	e := entryOf(t, c, decode(t, c, r.Data), "sagasu")
	if r.Action != Updated || e["command"] != s.Command || e["env"].(map[string]any)["SAGASU_EMBEDDER_URL"] == nil {
		t.Errorf("action %s, entry %v: want updated command and the user's env kept", r.Action, e)
	}

	toml := `model = "x"

[mcp_servers.sagasu]
command = "/old/sagasu"  # old
args = ["mcp"]
tool_timeout_sec = 120

[mcp_servers.sagasu.env]
SAGASU_LOG_LEVEL = "debug"

# other servers
[mcp_servers.other]
command = "other"
`
	c, _ = Lookup("codex")
	r, err = Merge(c, []byte(toml), s)
	if err != nil {
		t.Fatal(err)
	}
	doc := decode(t, c, r.Data)
	if err := schema(t, c).Validate(doc); err != nil {
		t.Fatalf("schema: %v\n%s", err, r.Data)
	}
	e = entryOf(t, c, doc, "sagasu")
	if r.Action != Updated || e["command"] != s.Command || e["tool_timeout_sec"] == nil || e["env"] == nil {
		t.Errorf("action %s, entry %v: want updated command, the user's timeout and env kept\n%s", r.Action, e, r.Data)
	}
	out := string(r.Data)
	if !strings.HasPrefix(out, "model = \"x\"\n\n") || !strings.Contains(out, "# other servers\n[mcp_servers.other]\ncommand = \"other\"\n") {
		t.Errorf("text outside sagasu's table changed:\n%s", out)
	}
}

func TestMergeTOMLKeepsTextByteForByte(t *testing.T) {
	c, _ := Lookup("codex")
	r, err := Merge(c, []byte(existing["codex"]), testServer(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(r.Data), existing["codex"]) {
		t.Errorf("the user's text was rewritten:\n%s", r.Data)
	}
}

func TestMergeRefusesWhatItCannotReadOrReplace(t *testing.T) {
	s := testServer(t)
	cases := []struct{ client, data string }{
		{"claude-desktop", `{"mcpServers": {"fs": {"command": "npx",}`},
		{"claude-desktop", `["not", "an", "object"]`},
		{"cursor", `{"mcpServers": []}`},
		{"vscode", `{"servers": {}} {"second": 1}`},
		{"codex", "model = \"x\"\n[mcp_servers.docs\ncommand = 1\n"},
		{"codex", "mcp_servers = 3\n"},
		// dotted keys: not a [mcp_servers.sagasu] header sagasu can replace
		{"codex", "mcp_servers.sagasu.command = \"/old\"\nmcp_servers.sagasu.args = []\n"},
	}
	for _, tc := range cases {
		c, _ := Lookup(tc.client)
		_, err := Merge(c, []byte(tc.data), s)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s %q: err %v, want a ParseError", tc.client, tc.data, err)
		}
	}
}

func TestMergeReadsJSONWithComments(t *testing.T) {
	c, _ := Lookup("vscode")
	in := `// my servers
{
  "servers": {
    /* the browser */
    "pw": {"type": "stdio", "command": "npx", "args": ["@playwright/mcp", "--url=http://a//b"],},
  },
}
`
	r, err := Merge(c, []byte(in), testServer(t))
	if err != nil {
		t.Fatal(err)
	}
	doc := decode(t, c, r.Data)
	if !r.Lossy || schema(t, c).Validate(doc) != nil {
		t.Fatalf("lossy %v, want true and a valid file:\n%s", r.Lossy, r.Data)
	}
	pw := entryOf(t, c, doc, "pw")
	if pw["args"].([]any)[1] != "--url=http://a//b" {
		t.Errorf("a // inside a string was taken for a comment: %v", pw["args"])
	}
}

func TestWriteFileIsAtomicKeepsModeFollowsLinksAndBacksUp(t *testing.T) {
	s := testServer(t)
	dir := t.TempDir()
	c, _ := Lookup("cursor")

	// A new file (and its folder) is created for the user alone.
	fresh := filepath.Join(dir, "proj", ".cursor", "mcp.json")
	w, err := WriteFile(fresh, c, s)
	if err != nil || w.Action != Added {
		t.Fatalf("new file: %v %v", w, err)
	}
	if fi, _ := os.Stat(fresh); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, want 0600", fi.Mode().Perm())
	}

	// An existing file keeps its mode; a symbolic link stays a link.
	target := filepath.Join(dir, "dotfiles", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte(existing["cursor"]), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	err = os.Symlink(target, link)
	testenv.Platform(t, err == nil, fmt.Sprintf("no symbolic links here: %v", err))
	w, err = WriteFile(link, c, s)
	if err != nil || w.Path != target {
		t.Fatalf("through a link: %+v %v", w, err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file")
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's own 0640", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(target)
	if !strings.Contains(string(data), `"browser"`) || !strings.Contains(string(data), `"sagasu"`) {
		t.Errorf("merged file lost a server:\n%s", data)
	}

	// A file with comments is backed up before the rewrite drops them.
	jsonc := filepath.Join(dir, "vs", "mcp.json")
	_ = os.MkdirAll(filepath.Dir(jsonc), 0o700)
	orig := "{\n  // keep me\n  \"servers\": {}\n}\n"
	_ = os.WriteFile(jsonc, []byte(orig), 0o600)
	vs, _ := Lookup("vscode")
	w, err = WriteFile(jsonc, vs, s)
	if err != nil || w.Backup == "" {
		t.Fatalf("jsonc: %+v %v", w, err)
	}
	if b, _ := os.ReadFile(w.Backup); string(b) != orig {
		t.Errorf("backup holds %q, want the original", b)
	}

	// A file that does not parse is left exactly as it was.
	broken := filepath.Join(dir, "broken.json")
	_ = os.WriteFile(broken, []byte(`{"mcpServers": {`), 0o600)
	if _, err := WriteFile(broken, c, s); err == nil || !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("broken file: err %v, want a refusal that says nothing was written", err)
	}
	if b, _ := os.ReadFile(broken); string(b) != `{"mcpServers": {` {
		t.Errorf("broken file changed to %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*tmp-*")); len(m) > 0 {
		t.Errorf("temporary files left behind: %v", m)
	}
}

func TestDefaultPaths(t *testing.T) {
	cases := []struct {
		client string
		env    Env
		want   string
	}{
		{"claude-desktop", Env{GOOS: "darwin", Home: "/Users/u"}, "/Users/u/Library/Application Support/Claude/claude_desktop_config.json"},
		{"claude-desktop", Env{GOOS: "linux", Home: "/home/u"}, "/home/u/.config/Claude/claude_desktop_config.json"},
		{"codex", Env{GOOS: "linux", Home: "/home/u"}, "/home/u/.codex/config.toml"},
		{"codex", Env{GOOS: "linux", Home: "/home/u", CodexHome: "/srv/codex"}, "/srv/codex/config.toml"},
		{"claude-code", Env{}, "/p/.mcp.json"},
		{"vscode", Env{}, "/p/.vscode/mcp.json"},
		{"cursor", Env{}, "/p/.cursor/mcp.json"},
	}
	for _, tc := range cases {
		c, err := Lookup(tc.client)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.DefaultPath("/p", tc.env)
		if err != nil || filepath.ToSlash(got) != tc.want {
			t.Errorf("%s %+v: %q %v, want %q", tc.client, tc.env, got, err, tc.want)
		}
	}
	if _, err := Lookup("emacs"); err == nil || !strings.Contains(err.Error(), "claude-code") {
		t.Errorf("unknown client: %v, want an error listing the clients", err)
	}
	if err := (Server{Name: "bad name", Command: "/x"}).Check(); err == nil {
		t.Error("a name with a space was accepted")
	}
	if err := (Server{Name: "s", Command: "sagasu"}).Check(); err == nil {
		t.Error("a relative command was accepted")
	}
}
