package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/httpguard"
	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// keptToken returns the token kept in the file at path, making a random one
// when there is none: the file is the user's alone (userfile), and a kept
// file that others may read is refused.
func keptToken(path string) (string, error) {
	b, err := userfile.ReadFile(path, 4096)
	switch {
	case err == nil:
		fi, err := os.Stat(path)
		if err != nil {
			return "", err
		}
		if userfile.Exposed(fi) {
			return "", fmt.Errorf("token file %s can be read by others (%v): run chmod 600 %s, or delete it for a new token", path, fi.Mode().Perm(), path)
		}
		if t := strings.TrimSpace(string(b)); len(t) >= 32 {
			return t, nil
		}
		return "", fmt.Errorf("token file %s holds no token of at least 32 characters: delete it for a new one", path)
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("read the token file: %w", err)
	}
	if err := userfile.MkdirAll(filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("make the folder of the token file: %w", err)
	}
	t := httpguard.NewToken()
	// O_EXCL: two servers starting at once keep one token.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, userfile.FileMode)
	if errors.Is(err, fs.ErrExist) {
		return keptToken(path)
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
