package app

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestEverySettingIsDeclaredOnce: each flag tag names a key the loader
// knows, and a flag, a variable and the file all reach it.
func TestEverySettingIsDeclaredOnce(t *testing.T) {
	keys := map[string]bool{}
	for k := range flatten("", structMap(reflectValue(Defaults()))) {
		keys[k] = true
	}
	if len(FlagKeys) < 15 {
		t.Fatalf("only %d flags found in the Config tags", len(FlagKeys))
	}
	for flag, key := range FlagKeys {
		if !keys[key] {
			t.Errorf("flag --%s names key %q, which the defaults do not have", flag, key)
		}
	}
	for _, want := range []string{"llm.driver", "llm.url", "cache_dir", "embedder.query_prefix", "mcp_servers"} {
		if !keys[want] {
			t.Errorf("key %q is missing", want)
		}
	}
}

func TestLLMFromEnvironmentAndFlags(t *testing.T) {
	env := []string{"SAGASU_LLM=openai", "SAGASU_LLM_URL=http://127.0.0.1:9/v1", "SAGASU_LLM_MODEL=smollm2", "SAGASU_CACHE_DIR=/tmp/c"}
	c, err := Load("", env, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.LLM.Driver != "openai" || c.LLM.URL != "http://127.0.0.1:9/v1" || c.LLM.Model != "smollm2" || c.CacheDir != "/tmp/c" {
		t.Errorf("from the environment: %+v, cache %q", c.LLM, c.CacheDir)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("llm", "", "")
	fs.String("llm-model", "", "")
	if err := fs.Parse([]string{"--llm", "anthropic", "--llm-model", "claude"}); err != nil {
		t.Fatal(err)
	}
	c, err = Load("", env, fs)
	if err != nil {
		t.Fatal(err)
	}
	if c.LLM.Driver != "anthropic" || c.LLM.Model != "claude" || c.LLM.URL != "http://127.0.0.1:9/v1" {
		t.Errorf("flags over the environment: %+v", c.LLM)
	}
	if _, err := Load("", []string{"SAGASU_LLM=gpt"}, nil); err == nil || !strings.Contains(err.Error(), `llm "gpt"`) {
		t.Errorf("unknown driver: %v", err)
	}
}

// TestNoDSNInPaths: a PostgreSQL DSN with a password never becomes the
// agent cache folder, and messages show it redacted.
func TestNoDSNInPaths(t *testing.T) {
	dsn := "postgres://sagasu:s3cret@db.example:5432/kb?sslmode=disable"
	a := &App{Config: Defaults()}
	a.Config.DB = dsn
	if dir := a.CacheDir(); strings.Contains(dir, "s3cret") || strings.Contains(dir, "db.example") {
		t.Errorf("cache dir %q is made from the DSN", dir)
	}
	if r := Redact(dsn); strings.Contains(r, "s3cret") || !strings.Contains(r, "db.example") {
		t.Errorf("Redact = %q", r)
	}
	a.Config.DB = "idx/sagasu.db"
	if dir := a.CacheDir(); dir != "idx/cache/agent" {
		t.Errorf("SQLite cache dir %q", dir)
	}
	a.Config.CacheDir = "/var/cache/sagasu"
	a.Config.DB = dsn
	if dir := a.CacheDir(); dir != "/var/cache/sagasu" {
		t.Errorf("cache_dir setting ignored: %q", dir)
	}
}

func reflectValue(c Config) reflect.Value { return reflect.ValueOf(c) }

// flatten turns a nested settings map into dotted keys.
func flatten(prefix string, m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			for kk, vv := range flatten(prefix+k+".", sub) {
				out[kk] = vv
			}
			continue
		}
		out[prefix+k] = v
	}
	return out
}
