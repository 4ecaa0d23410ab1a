package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/httpguard"
)

// userConfigDir is sagasu's folder in the user's configuration folder, read
// from the environment sagasu runs with: $XDG_CONFIG_HOME/sagasu, else
// ~/.config/sagasu (~/Library/Application Support/sagasu on macOS,
// %AppData%\sagasu on Windows).
func userConfigDir(getenv func(string) string) (string, error) {
	if runtime.GOOS == "windows" {
		if d := getenv("AppData"); d != "" {
			return filepath.Join(d, "sagasu"), nil
		}
		return "", errors.New("%AppData% is not set")
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "sagasu"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("$HOME is not set")
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "sagasu"), nil
	}
	return filepath.Join(home, ".config", "sagasu"), nil
}

// keptToken returns the token kept in the file at path, making a random one
// when there is none: the file is written 0600 in a folder made 0700, and a
// kept file that others may read is refused.
func keptToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		fi, err := os.Stat(path)
		if err != nil {
			return "", err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("token file %s can be read by others (%v): run chmod 600 %s, or delete it for a new token", path, fi.Mode().Perm(), path)
		}
		if t := strings.TrimSpace(string(b)); len(t) >= 32 {
			return t, nil
		}
		return "", fmt.Errorf("token file %s holds no token of at least 32 characters: delete it for a new one", path)
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("read the token file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("make the folder of the token file: %w", err)
	}
	t := httpguard.NewToken()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return keptToken(path) // another sagasu made it first
	}
	if err != nil {
		return "", fmt.Errorf("write the token file: %w", err)
	}
	if _, err := f.WriteString(t + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("write the token file: %w", err)
	}
	return t, f.Close()
}
