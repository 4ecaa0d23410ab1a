package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// A project's sagasu.yaml, found in the working directory without the user
// naming it, is data until the user trusts it: a cloned repository can ship
// one. Untrusted, the settings tagged `trust:"..."` in Config (the ones
// that start programs, send keys or documents to another host, or lower a
// guard) are ignored and reported; everything else in it applies. The user
// trusts a file with `sagasu trust`, which records the file's SHA-256 in
// the user's own config folder: any change to the file asks again. A file
// the user names (--config) and the user-level config are the user's own
// choice and need no step.

// UserConfigFile is the user-level configuration, under UserConfigDir.
const UserConfigFile = "config.yaml"

// trustFile records the project files the user trusts, under UserConfigDir.
const trustFile = "trusted.json"

// ConfigOrigin says which files a configuration was read from and what an
// untrusted project file was not allowed to set.
type ConfigOrigin struct {
	// UserFile is the user-level config that was read ("" when none).
	UserFile string `json:"userFile,omitempty"`
	// ProjectFile is the project config that was read (--config, or the
	// working directory's sagasu.yaml), "" when none.
	ProjectFile string `json:"projectFile,omitempty"`
	// Explicit is set when the user named ProjectFile (--config).
	Explicit bool `json:"explicit,omitempty"`
	// Trusted is set when ProjectFile may set everything: named by the
	// user, or trusted with `sagasu trust` in its current content.
	Trusted bool `json:"trusted"`
	// Changed is set when the user trusted ProjectFile before, with other
	// content.
	Changed bool `json:"changed,omitempty"`
	// Ignored are the settings of an untrusted ProjectFile that were not
	// applied.
	Ignored []IgnoredSetting `json:"ignored,omitempty"`
}

// IgnoredSetting is one setting of an untrusted project file that was not
// applied.
type IgnoredSetting struct {
	Key   string `json:"key"`   // the setting, e.g. "mcp_servers.x.command"
	Value string `json:"value"` // what the file set, shortened
	Why   string `json:"why"`   // what it would have done
}

// Warning tells the user what an untrusted project file was not allowed to
// do and how to allow it; "" when nothing was ignored.
func (o ConfigOrigin) Warning() string {
	if len(o.Ignored) == 0 {
		return ""
	}
	var b strings.Builder
	state := "which you have not trusted"
	if o.Changed {
		state = "which changed since you trusted it"
	}
	fmt.Fprintf(&b, "settings in %s were ignored: the file came with the project, %s, and they could run programs, send your keys or documents elsewhere, or lower a guard:\n", o.ProjectFile, state)
	for _, s := range o.Ignored {
		fmt.Fprintf(&b, "  %-24s %s (%s)\n", s.Key, s.Value, s.Why)
	}
	fmt.Fprintf(&b, "Read the file; if you trust it, run `sagasu trust %s` (trust holds for this exact content), or name it with --config.", o.ProjectFile)
	return b.String()
}

// ignoredHint explains, when key (or a section holding it) was set by the
// untrusted project file and ignored, why and how to allow it; "" when it
// was not.
func (o ConfigOrigin) ignoredHint(key string) string {
	for _, s := range o.Ignored {
		if key == s.Key || strings.HasPrefix(key, s.Key+".") || strings.HasPrefix(s.Key, key+".") {
			return fmt.Sprintf("%s sets it, but that file is not trusted (it %s): read it, then run `sagasu trust %s`", o.ProjectFile, s.Why, o.ProjectFile)
		}
	}
	return ""
}

// privilegedKeys lists the configuration keys tagged `trust:"why"` in
// Config, with what each could do.
var privilegedKeys = trustTags(reflect.TypeFor[Config](), "")

func trustTags(t reflect.Type, prefix string) map[string]string {
	out := map[string]string{}
	for f := range t.Fields() {
		if f.Tag.Get("koanf") == "-" {
			continue
		}
		key := prefix + f.Tag.Get("koanf")
		if why := f.Tag.Get("trust"); why != "" {
			out[key] = why
		}
		if f.Type.Kind() == reflect.Struct {
			for k, v := range trustTags(f.Type, key+".") {
				out[k] = v
			}
		}
	}
	return out
}

// sectionMark starts a trust tag whose whole section goes with the key:
// an embedder or a model is one endpoint, so a project file that may not
// say where it runs may not choose it either (keeping its driver alone
// would send the documents to the vendor's own host instead).
const sectionMark = "section:"

// privileged says why key, set to value in a project file, needs trust;
// "" when it does not. A key under a privileged one (mcp_servers.x.args)
// needs it too. The index location needs none when it names a file inside
// the project's folder (a relative path that does not climb out): the
// documents stay there. A server, or a file elsewhere (another project's
// index, someone else's, with the agent cache beside it), needs trust.
func privileged(key string, value any) string {
	for k, why := range privilegedKeys {
		if key != k && !strings.HasPrefix(key, k+".") {
			continue
		}
		switch s, _ := value.(string); {
		case k == "db" && !IsServerLocation(s):
			if insideProject(strings.TrimPrefix(s, "sqlite://")) {
				return ""
			}
			return "reads and changes an index outside the project (another project's, or someone else's), and keeps the agent cache beside it"
		case k == "embedder.path" && insideProject(s):
			return ""
		}
		return strings.TrimPrefix(why, sectionMark)
	}
	return ""
}

// insideProject reports whether p, a path from a project file, names
// something in the project's folder: relative, and not climbing out.
func insideProject(p string) bool {
	return p != "" && filepath.IsLocal(filepath.FromSlash(p))
}

// filterUntrusted removes from m (a parsed project file, nested maps) every
// privileged setting and returns what it removed, sorted by key.
func filterUntrusted(m map[string]any) []IgnoredSetting {
	var out []IgnoredSetting
	for k, why := range privilegedKeys {
		i := strings.LastIndexByte(k, '.')
		if i < 0 || !strings.HasPrefix(why, sectionMark) {
			continue
		}
		section, field := k[:i], k[i+1:]
		// The map that holds the section (agent.planner is in agent).
		parent, name := m, section
		if j := strings.LastIndexByte(section, '.'); j >= 0 {
			parent, name = nestedMap(m, section[:j]), section[j+1:]
		}
		if sub, isMap := parent[name].(map[string]any); isMap && sub[field] != nil && privileged(k, sub[field]) != "" {
			out = append(out, IgnoredSetting{Key: section, Value: summarize(sub), Why: strings.TrimPrefix(why, sectionMark)})
			delete(parent, name)
		}
	}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			key := prefix + k
			if why := privileged(key, v); why != "" {
				out = append(out, IgnoredSetting{Key: key, Value: summarize(v), Why: why})
				delete(m, k)
				continue
			}
			if sub, ok := v.(map[string]any); ok {
				walk(key+".", sub)
			}
		}
	}
	walk("", m)
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// nestedMap returns the map at the dotted path in m, nil when there is none.
func nestedMap(m map[string]any, path string) map[string]any {
	for _, p := range strings.Split(path, ".") {
		next, ok := m[p].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// summarize shows a setting's value in one short line.
func summarize(v any) string {
	var s string
	switch v := v.(type) {
	case string:
		s = Redact(v)
	case map[string]any, []any:
		raw, _ := json.Marshal(v)
		s = string(raw)
	default:
		s = fmt.Sprint(v)
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 100 {
		s = string(r[:99]) + "…"
	}
	return s
}

// UserConfigDir is sagasu's folder in the user's configuration directory
// (as os.UserConfigDir finds it, but from getenv): the user-level config
// and the trusted project files live there. "" when the environment names
// no home.
func UserConfigDir(getenv func(string) string) string {
	var base string
	switch runtime.GOOS {
	case "windows":
		base = getenv("AppData")
		if base == "" {
			base = getenv("APPDATA")
		}
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			base = filepath.Join(h, "Library", "Application Support")
		}
	default:
		base = getenv("XDG_CONFIG_HOME")
		if base == "" || !filepath.IsAbs(base) {
			base = ""
			if h := getenv("HOME"); h != "" {
				base = filepath.Join(h, ".config")
			}
		}
	}
	if base == "" {
		return ""
	}
	return filepath.Join(base, "sagasu")
}

// trustRecord is one trusted project file.
type trustRecord struct {
	SHA256  string    `json:"sha256"`
	Trusted time.Time `json:"trusted"`
}

// trustStore is the user's list of trusted project files, by path as
// found, and of the indexes whose pinned embedder they made or trusted
// (see pins.go), by location.
type trustStore struct {
	Files   map[string]trustRecord `json:"files"`
	Indexes map[string]trustRecord `json:"indexes,omitempty"`
}

func readTrust(dir string) (trustStore, error) {
	ts := trustStore{Files: map[string]trustRecord{}}
	if dir == "" {
		return ts, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, trustFile))
	if errors.Is(err, fs.ErrNotExist) {
		return ts, nil
	}
	if err != nil {
		return ts, fmt.Errorf("read the trusted project files: %w", err)
	}
	if err := json.Unmarshal(data, &ts); err != nil {
		return ts, fmt.Errorf("the trusted project files %s are unreadable (%v): delete the file and trust your projects again", filepath.Join(dir, trustFile), err)
	}
	if ts.Files == nil {
		ts.Files = map[string]trustRecord{}
	}
	return ts, nil
}

func writeTrust(dir string, ts trustStore) error {
	if dir == "" {
		return errors.New("no home folder in the environment (HOME is unset), so sagasu has nowhere to remember what you trust: name the file with --config instead")
	}
	data, err := json.MarshalIndent(ts, "", "  ")
	if err != nil {
		return err
	}
	return userfile.Write(filepath.Join(dir, trustFile), append(data, '\n'))
}

// trustKey names a file in the trust store: its absolute path as found,
// symbolic links not resolved. A project's sagasu.yaml that is a link
// (clone/sagasu.yaml -> ~/work/trusted/sagasu.yaml), or lies in a folder
// reached through one, is another file to trust than its target: trust
// lets a file start programs, and they start in the folder the file was
// found in, which a clone controls.
func trustKey(path string) (string, error) {
	return filepath.Abs(path)
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// trustState reports whether the user trusts the project file at path
// with exactly this content, and whether they trusted other content of it.
func trustState(dir, path string, content []byte) (trusted, changed bool, err error) {
	ts, err := readTrust(dir)
	if err != nil {
		return false, false, err
	}
	key, err := trustKey(path)
	if err != nil {
		return false, false, err
	}
	rec, ok := ts.Files[key]
	if !ok {
		return false, false, nil
	}
	if rec.SHA256 == digest(content) {
		return true, false, nil
	}
	return false, true, nil
}

// TrustResult is what `sagasu trust` did.
type TrustResult struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	// Allows are the settings the file may now set that it could not
	// before (empty when nothing in it needed trust).
	Allows []IgnoredSetting `json:"allows"`
}

// TrustProjectFile records that the user trusts the project config at path
// in its current content.
func TrustProjectFile(getenv func(string) string, path string, now time.Time) (TrustResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return TrustResult{}, fmt.Errorf("trust %q: %w: give the project's sagasu.yaml", path, err)
	}
	m, err := parseYAML(path, data)
	if err != nil {
		return TrustResult{}, err
	}
	key, err := trustKey(path)
	if err != nil {
		return TrustResult{}, err
	}
	dir := UserConfigDir(getenv)
	ts, err := readTrust(dir)
	if err != nil {
		return TrustResult{}, err
	}
	sum := digest(data)
	ts.Files[key] = trustRecord{SHA256: sum, Trusted: now.UTC()}
	if err := writeTrust(dir, ts); err != nil {
		return TrustResult{}, err
	}
	return TrustResult{File: key, SHA256: sum, Allows: filterUntrusted(m)}, nil
}

// RevokeTrust forgets that the user trusts the project config at path; it
// reports whether there was anything to forget.
func RevokeTrust(getenv func(string) string, path string) (bool, error) {
	key, err := trustKey(path)
	if err != nil {
		return false, err
	}
	dir := UserConfigDir(getenv)
	ts, err := readTrust(dir)
	if err != nil {
		return false, err
	}
	if _, ok := ts.Files[key]; !ok {
		return false, nil
	}
	delete(ts.Files, key)
	return true, writeTrust(dir, ts)
}

// TrustedFile is one entry of the user's trusted project files.
type TrustedFile struct {
	File    string    `json:"file"`
	SHA256  string    `json:"sha256"`
	Trusted time.Time `json:"trusted"`
	// State is "trusted", "changed" (the file differs from what was
	// trusted) or "missing".
	State string `json:"state"`
}

// TrustedFiles lists the project files the user trusts, by path.
func TrustedFiles(getenv func(string) string) ([]TrustedFile, error) {
	ts, err := readTrust(UserConfigDir(getenv))
	if err != nil {
		return nil, err
	}
	out := make([]TrustedFile, 0, len(ts.Files))
	for path, rec := range ts.Files {
		f := TrustedFile{File: path, SHA256: rec.SHA256, Trusted: rec.Trusted, State: "trusted"}
		data, err := os.ReadFile(path)
		switch {
		case err != nil:
			f.State = "missing"
		case digest(data) != rec.SHA256:
			f.State = "changed"
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b TrustedFile) int { return strings.Compare(a.File, b.File) })
	return out, nil
}
