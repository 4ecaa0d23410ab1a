package ignore

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// GlobalExcludesFile returns the user's global excludes file as git finds
// it: core.excludesFile from the system, global and XDG configuration
// files (GIT_CONFIG_GLOBAL and GIT_CONFIG_NOSYSTEM are honoured; include
// directives are not followed), else $XDG_CONFIG_HOME/git/ignore, else
// ~/.config/git/ignore. getenv reads the environment. "" means none.
func GlobalExcludesFile(getenv func(string) string) string {
	home := getenv("HOME")
	xdg := getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var files []string // lowest precedence first
	if getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, "/etc/gitconfig")
	}
	if g := getenv("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else {
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	value, found := "", false
	for _, f := range files {
		if v, ok := configValue(f, "core", "excludesfile"); ok {
			value, found = v, true
		}
	}
	if found {
		return expandHome(value, home)
	}
	if xdg != "" {
		return filepath.Join(xdg, "git", "ignore")
	}
	return ""
}

// expandHome turns a leading "~/" into the home folder, as git does for
// path settings.
func expandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	return p
}

// configValue reads the last value of section.key (lower case) in the git
// configuration file name: a small reader of git's format (sections,
// case-insensitive keys, quotes, backslash escapes, ";" and "#"
// comments) for the one setting needed here.
func configValue(name, section, key string) (string, bool) {
	f, err := os.Open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	cur := ""
	value, found := "", false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			head := strings.TrimSpace(line[1:end])
			if i := strings.IndexAny(head, " \t\""); i >= 0 {
				head = head[:i] + "\x00" // a subsection: never "core"
			}
			cur = strings.ToLower(head)
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		if cur != section || line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, hasValue := strings.Cut(line, "=")
		if !strings.EqualFold(strings.TrimSpace(k), key) {
			continue
		}
		if !hasValue {
			continue
		}
		value, found = unquote(strings.TrimSpace(v)), true
	}
	return value, found
}

// unquote reads a git configuration value: double quotes group, a
// backslash escapes, and an unquoted ";" or "#" starts a comment.
func unquote(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case (c == ';' || c == '#') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimRight(b.String(), " \t")
}
