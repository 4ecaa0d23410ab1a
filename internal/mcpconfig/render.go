package mcpconfig

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/pelletier/go-toml/v2"
)

// jsonEntry is one stdio server in the JSON clients' files; fields in the
// order the clients' documentation shows them.
type jsonEntry struct {
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// tomlEntry is one stdio server in Codex's config.toml.
type tomlEntry struct {
	Command string   `toml:"command"`
	Args    []string `toml:"args"`
}

// entryJSON renders s as the value of the client's server table.
func (c Client) entryJSON(s Server) ([]byte, error) {
	e := jsonEntry{Command: s.Command, Args: s.Args}
	if c.typed {
		e.Type = "stdio"
	}
	return marshalJSON(e)
}

// marshalJSON encodes v without HTML escaping (paths may hold '&').
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// tomlTable renders s as Codex's [mcp_servers.NAME] table.
func tomlTable(key string, s Server) ([]byte, error) {
	body, err := toml.Marshal(tomlEntry{Command: s.Command, Args: s.Args})
	if err != nil {
		return nil, err
	}
	// Name is checked to be a bare key, so it needs no quoting.
	return fmt.Appendf(nil, "[%s.%s]\n%s", key, s.Name, body), nil
}

// Render returns the whole file a client would need if it had no other
// servers: what `sagasu mcp config CLIENT` prints.
func Render(c Client, s Server) ([]byte, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	if c.Format == TOML {
		return tomlTable(c.Key, s)
	}
	r, err := Merge(c, nil, s)
	return r.Data, err
}
