package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/embed/local"
	"github.com/sagasu-dev/sagasu/internal/embed/modelhub"
)

// ModelsDir is the folder `sagasu model pull` and `sagasu model import`
// put local models in.
func ModelsDir(getenv func(string) string) (string, error) { return modelhub.Dir(getenv) }

// KnownModels names the models PullModel fetches.
func KnownModels() []string { return modelhub.Names() }

// PullModel downloads the known model name from the Hugging Face hub (or
// the mirror HF_ENDPOINT names) into the model folder, checks every file
// against its pinned checksum, and checks that the local embedder loads
// it. It returns the model's folder.
func PullModel(ctx context.Context, name string, getenv func(string) string, progress io.Writer) (string, error) {
	m, ok := modelhub.Lookup(name)
	if !ok {
		return "", fmt.Errorf("no known model %q: `sagasu model pull` fetches %s; any other sentence-transformers folder can be added with `sagasu model import DIR`",
			name, strings.Join(modelhub.Names(), ", "))
	}
	dir, err := modelhub.Dir(getenv)
	if err != nil {
		return "", err
	}
	path, err := modelhub.Pull(ctx, m, dir, modelhub.PullOptions{Endpoint: getenv("HF_ENDPOINT"), Progress: progress})
	if err != nil {
		return "", err
	}
	if _, err := local.Open(path, local.Options{}); err != nil {
		return "", fmt.Errorf("the pulled model does not load: %w", err)
	}
	return path, nil
}

// ImportModel copies the sentence-transformers folder src into the model
// folder under name (default: what its files say it is, see
// modelhub.NameFromFiles), after checking that the local embedder loads
// it, and returns the new folder.
func ImportModel(src, name string, getenv func(string) string) (string, error) {
	if name == "" {
		name = modelhub.NameFromFiles(src)
	}
	if err := modelhub.CheckKnown(src, name); err != nil {
		return "", err
	}
	if err := modelhub.CheckName(name); err != nil {
		return "", err
	}
	if _, err := local.Open(src, local.Options{}); err != nil {
		return "", err
	}
	dir, err := modelhub.Dir(getenv)
	if err != nil {
		return "", err
	}
	return modelhub.Import(src, dir, name, false)
}

// ModelInfo is one line of `sagasu model list`.
type ModelInfo struct {
	Name      string `json:"name"`
	Known     bool   `json:"known"`     // `sagasu model pull` can fetch it
	Installed bool   `json:"installed"` // it is in the model folder
	// Folder is the folder a known model was imported as, when it is not
	// called by the model's name (use that name with --embedder-model).
	Folder string `json:"folder,omitempty"`
	// Multilingual says the model reads Japanese and other languages, not
	// only English.
	Multilingual bool   `json:"multilingual,omitempty"`
	About        string `json:"about,omitempty"`
	Path         string `json:"path,omitempty"`
}

// ListModels lists the known models and the ones in the model folder.
func ListModels(getenv func(string) string) (string, []ModelInfo, error) {
	dir, err := modelhub.Dir(getenv)
	if err != nil {
		return "", nil, err
	}
	have, err := modelhub.Installed(dir)
	if err != nil {
		return "", nil, err
	}
	installed := map[string]bool{}
	for _, n := range have {
		installed[n] = true
	}
	// A folder imported under another name is the known model its files
	// are.
	as := map[string]string{}
	for _, n := range have {
		if _, known := modelhub.Lookup(n); known {
			continue
		}
		if m, ok := modelhub.Match(modelhub.Path(dir, n)); ok && as[m.Name] == "" {
			as[m.Name] = n
		}
	}
	var out []ModelInfo
	for _, m := range modelhub.Known {
		mi := ModelInfo{Name: m.Name, Known: true, About: m.About, Multilingual: m.Multilingual, Installed: installed[m.Name]}
		switch {
		case mi.Installed:
			mi.Path = modelhub.Path(dir, m.Name)
		case as[m.Name] != "":
			mi.Installed, mi.Folder, mi.Path = true, as[m.Name], modelhub.Path(dir, as[m.Name])
			delete(installed, as[m.Name])
		}
		delete(installed, m.Name)
		out = append(out, mi)
	}
	for _, n := range have {
		if installed[n] {
			out = append(out, ModelInfo{Name: n, Installed: true, Path: modelhub.Path(dir, n)})
		}
	}
	return dir, out, nil
}

// IsModelFolder reports whether src is a folder (a model to import) rather
// than a word-vector file (to convert).
func IsModelFolder(src string) bool {
	st, err := os.Stat(src)
	return err == nil && st.IsDir()
}
