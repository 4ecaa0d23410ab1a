package source

import (
	"path"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// Detect returns the format of the file at path, judged by its extension
// (case does not matter), and for code the language's name: ".md",
// ".markdown" and ".mdx" are markdown; ".go" is go; common programming,
// markup and config languages (".py" is "python", ".ts" "typescript", ".sh"
// "shell", ".yaml" "yaml", ...) are code; everything else is text.
// A few well-known file names without an extension (Makefile, Dockerfile)
// count as code too.
func Detect(p string) (doc.Format, string) {
	base := path.Base(strings.ReplaceAll(p, `\`, "/"))
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(base), "."))
	switch ext {
	case "md", "markdown", "mdx", "mkd", "mdown":
		return doc.FormatMarkdown, ""
	case "go":
		return doc.FormatGo, "go"
	}
	if lang, ok := codeExt[ext]; ok && ext != "" {
		return doc.FormatCode, lang
	}
	if lang, ok := codeName[base]; ok {
		return doc.FormatCode, lang
	}
	return doc.FormatText, ""
}

// codeExt maps a lower-case file extension to its language. It is read only.
var codeExt = map[string]string{
	"py": "python", "pyi": "python", "pyw": "python",
	"js": "javascript", "mjs": "javascript", "cjs": "javascript",
	"jsx": "jsx",
	"ts":  "typescript", "mts": "typescript", "cts": "typescript",
	"tsx":  "tsx",
	"java": "java",
	"c":    "c", "h": "c",
	"cpp": "cpp", "cc": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "hxx": "cpp",
	"mm":  "objective-c",
	"rs":  "rust",
	"rb":  "ruby",
	"php": "php",
	"cs":  "csharp",
	"fs":  "fsharp",
	"kt":  "kotlin", "kts": "kotlin",
	"swift": "swift",
	"scala": "scala", "sc": "scala",
	"groovy": "groovy", "gradle": "groovy",
	"clj": "clojure", "cljs": "clojure",
	"dart": "dart",
	"lua":  "lua",
	"pl":   "perl", "pm": "perl",
	"r":  "r",
	"jl": "julia",
	"ex": "elixir", "exs": "elixir",
	"erl": "erlang",
	"hs":  "haskell",
	"ml":  "ocaml", "mli": "ocaml",
	"zig": "zig",
	"nim": "nim",
	"sh":  "shell", "bash": "shell", "zsh": "shell", "fish": "shell",
	"ps1": "powershell",
	"bat": "batch", "cmd": "batch",
	"sql":    "sql",
	"vue":    "vue",
	"svelte": "svelte",
	"astro":  "astro",
	"html":   "html", "htm": "html",
	"css": "css", "scss": "scss", "sass": "sass", "less": "less",
	"xml":  "xml",
	"yaml": "yaml", "yml": "yaml",
	"toml": "toml",
	"json": "json", "jsonc": "json", "json5": "json",
	"ini":     "ini",
	"proto":   "protobuf",
	"graphql": "graphql", "gql": "graphql",
	"tf": "hcl", "hcl": "hcl",
	"cmake": "cmake",
	"mk":    "make",
	"vim":   "vim",
	"el":    "elisp",
}

// codeName maps file names that have no telling extension to their language.
var codeName = map[string]string{
	"Makefile":       "make",
	"GNUmakefile":    "make",
	"makefile":       "make",
	"Dockerfile":     "dockerfile",
	"Containerfile":  "dockerfile",
	"CMakeLists.txt": "cmake",
	"Jenkinsfile":    "groovy",
	"Rakefile":       "ruby",
	"Gemfile":        "ruby",
}
