package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// An index pins the embedder it was built with (see PinEmbedder): its
// driver and model, and for some drivers an address (embedder.url) or a
// file (embedder.path). An index can come with a cloned repository, so
// what it pins is data, like an untrusted sagasu.yaml: sagasu contacts a
// pinned address other than the vendor's own https host, and reads a
// pinned file, only when the user named it (a flag, a SAGASU_* variable,
// the user config, a file named or trusted) or made or trusted this index
// with exactly these pins. A pin the user made (`sagasu index --embedder
// ...` and the like) is remembered at once, so that later commands without
// the flag work as before; a cloned index asks for `sagasu trust --index`.
//
// The record is kept in the user's own config folder (trusted.json, beside
// the trusted project files), keyed by the index's location as found (a
// file's absolute path, links unresolved; a server location with its
// secrets hidden) and holding the SHA-256 of the pinned settings. A clone
// cannot write there, and a record matches only the same index path with
// the same pins.

// ErrUntrustedPin is what the error of an index whose pinned address or
// file the user has neither named nor trusted Is.
var ErrUntrustedPin = errors.New("the index's pinned embedder is not trusted")

// untrustedPin is that error, in its own words.
type untrustedPin struct{ msg string }

func (e *untrustedPin) Error() string        { return e.msg }
func (e *untrustedPin) Is(target error) bool { return target == ErrUntrustedPin }

// pinReach says what of pin reaches beyond the vendor's own host and the
// user's model cache ("address http://…", "file /…"), "" when nothing.
func pinReach(p EmbedderConfig) string {
	switch {
	case p.URL != "" && !vendorAddress(p.Driver, p.URL):
		return "address " + Redact(p.URL)
	case p.Path != "":
		return "file " + p.Path
	}
	return ""
}

// namesPin reports whether the configuration names what pin reaches: the
// same address, or the same file.
func (a *App) namesPin(p EmbedderConfig) bool {
	c := a.Config.Embedder
	if p.URL != "" && !vendorAddress(p.Driver, p.URL) && !sameAddress(p.URL, c.URL) {
		return false
	}
	if p.Path != "" {
		abs, err := filepath.Abs(c.Path)
		if c.Path == "" || err != nil || filepath.Clean(abs) != filepath.Clean(p.Path) {
			return false
		}
	}
	return true
}

// pinName names a pinned embedder in messages: driver/model.
func pinName(p EmbedderConfig) string {
	if p.Model == "" {
		return p.Driver
	}
	return p.Driver + "/" + p.Model
}

// indexKey names the index at location in the trust store.
func indexKey(location string) string {
	if IsServerLocation(location) {
		return Redact(location)
	}
	p := strings.TrimPrefix(location, "sqlite://")
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// checkPin returns nil when sagasu may use pin, the embedder the index at
// a.Config.DB pins as raw: it reaches nothing beyond its vendor, the user
// names what it reaches, or the user made or trusted these pins of this
// index. Otherwise it returns an error, wrapping ErrUntrustedPin, that
// says what was pinned and how to allow it.
func (a *App) checkPin(pin EmbedderConfig, raw string) error {
	reach := pinReach(pin)
	if reach == "" || a.namesPin(pin) {
		return nil
	}
	key := indexKey(a.Config.DB)
	if a.madePins[key] == digest([]byte(raw)) {
		return nil
	}
	ts, err := readTrust(UserConfigDir(a.Getenv))
	if err != nil {
		return err
	}
	if rec, ok := ts.Indexes[key]; ok && rec.SHA256 == digest([]byte(raw)) {
		return nil
	}
	name := "--embedder-url " + Redact(pin.URL)
	if pin.URL == "" {
		name = "--embedder-path " + pin.Path
	}
	what := pinName(pin)
	return &untrustedPin{fmt.Sprintf("the index %s is pinned to embedder %s at the %s, which came with the index, not from you: a cloned repository can commit an index that sends your documents and questions to its own server, so nothing was sent or read. If you expect it, name it (%s, SAGASU_EMBEDDER_*, or your user config), or trust this index as it is: sagasu trust --index %s",
		Redact(a.Config.DB), what, reach, name, Redact(a.Config.DB))}
}

// rememberPin records that the user made the index's current pins (see
// checkPin), in this process and, when there is a home folder, for good.
func (a *App) rememberPin(ctx context.Context, st store.Store) error {
	raw, err := st.Meta(ctx, metaEmbedder)
	if err != nil || raw == "" {
		return err
	}
	key := indexKey(a.Config.DB)
	if a.madePins == nil {
		a.madePins = map[string]string{}
	}
	a.madePins[key] = digest([]byte(raw))
	dir := UserConfigDir(a.Getenv)
	if dir == "" {
		return nil
	}
	return recordIndex(dir, key, raw, time.Now())
}

// recordIndex trusts the pins raw of the index at key.
func recordIndex(dir, key, raw string, now time.Time) error {
	ts, err := readTrust(dir)
	if err != nil {
		return err
	}
	sum := digest([]byte(raw))
	if rec, ok := ts.Indexes[key]; ok && rec.SHA256 == sum {
		return nil
	}
	if ts.Indexes == nil {
		ts.Indexes = map[string]trustRecord{}
	}
	ts.Indexes[key] = trustRecord{SHA256: sum, Trusted: now.UTC()}
	return writeTrust(dir, ts)
}

// TrustedIndex is what `sagasu trust --index` did.
type TrustedIndex struct {
	Index string `json:"index"`
	// Embedder is the pinned embedder now trusted ("" when the index pins
	// none, or nothing that needs trust).
	Embedder string `json:"embedder,omitempty"`
	// Reaches is what it reaches: an address or a file.
	Reaches string `json:"reaches,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
}

// TrustIndex records that the user trusts what the index st, opened at
// a.Config.DB, pins now; any change to the pins asks again.
func (a *App) TrustIndex(ctx context.Context, st store.Store, now time.Time) (TrustedIndex, error) {
	out := TrustedIndex{Index: indexKey(a.Config.DB)}
	raw, err := st.Meta(ctx, metaEmbedder)
	if err != nil || raw == "" {
		return out, err
	}
	pin, err := Pinned(ctx, st)
	if err != nil {
		return out, err
	}
	out.Embedder, out.Reaches, out.SHA256 = pinName(pin), pinReach(pin), digest([]byte(raw))
	dir := UserConfigDir(a.Getenv)
	if dir == "" {
		return out, errors.New("no home folder in the environment (HOME is unset), so sagasu has nowhere to remember what you trust: name the address with --embedder-url instead")
	}
	return out, recordIndex(dir, out.Index, raw, now)
}

// RevokeIndex forgets that the user trusts the pins of the index at
// location; it reports whether there was anything to forget.
func RevokeIndex(getenv func(string) string, location string) (bool, error) {
	dir := UserConfigDir(getenv)
	ts, err := readTrust(dir)
	if err != nil {
		return false, err
	}
	key := indexKey(location)
	if _, ok := ts.Indexes[key]; !ok {
		return false, nil
	}
	delete(ts.Indexes, key)
	return true, writeTrust(dir, ts)
}

// TrustedIndexes lists the indexes whose pins the user made or trusted.
func TrustedIndexes(getenv func(string) string) ([]TrustedFile, error) {
	ts, err := readTrust(UserConfigDir(getenv))
	if err != nil {
		return nil, err
	}
	out := make([]TrustedFile, 0, len(ts.Indexes))
	for key, rec := range ts.Indexes {
		out = append(out, TrustedFile{File: key, SHA256: rec.SHA256, Trusted: rec.Trusted, State: "trusted"})
	}
	slices.SortFunc(out, func(a, b TrustedFile) int { return strings.Compare(a.File, b.File) })
	return out, nil
}
