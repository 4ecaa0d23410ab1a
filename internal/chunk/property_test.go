package chunk

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/testenv"
)

// checkSplit splits d and checks the invariants the package promises:
//  1. each chunk's Text is Content[StartByte:EndByte], chunks are in order of
//     StartByte, and the line numbers match the byte span;
//  2. Count(Text) <= MaxTokens and Tokens == Count(Text);
//  3. every non-space character of Content lies in some chunk;
//  4. blank content gives no chunks.
func checkSplit(t testing.TB, d doc.Document, opt Options) []doc.Chunk {
	t.Helper()
	chunks, err := Split(d, opt)
	if err != nil {
		t.Fatalf("%s (%s, max %d): %v", d.URI, d.Format, opt.MaxTokens, err)
	}
	if problem := violation(d, opt, chunks); problem != "" {
		t.Fatalf("%s (%s, max %d, overlap %d): %s", d.URI, d.Format, opt.MaxTokens, opt.Overlap, problem)
	}
	return chunks
}

// violation returns a description of the first broken invariant, or "".
func violation(d doc.Document, opt Options, chunks []doc.Chunk) string {
	o, err := opt.withDefaults()
	if err != nil {
		return err.Error()
	}
	src := d.Content
	if isBlank(src) {
		if len(chunks) != 0 {
			return sprintf("blank content gave %d chunks", len(chunks))
		}
		return ""
	}
	covered := make([]int, len(src)+1) // +1 at each start, -1 at each end
	lineAt := make([]int, len(src))    // 1-based line of each byte
	for i, line := 0, 1; i < len(src); i++ {
		lineAt[i] = line
		if src[i] == '\n' {
			line++
		}
	}
	prevStart := -1
	for i, c := range chunks {
		switch {
		case c.Index != i:
			return sprintf("chunk %d has Index %d", i, c.Index)
		case c.ID != 0 || c.SourceID != "":
			return sprintf("chunk %d has ID %d, SourceID %q", i, c.ID, c.SourceID)
		case c.StartByte < 0 || c.EndByte > len(src) || c.StartByte >= c.EndByte:
			return sprintf("chunk %d has span [%d, %d) in %d bytes", i, c.StartByte, c.EndByte, len(src))
		case c.Text != src[c.StartByte:c.EndByte]:
			return sprintf("chunk %d: Text is not Content[%d:%d]", i, c.StartByte, c.EndByte)
		case c.StartByte <= prevStart:
			return sprintf("chunk %d starts at %d, not after chunk %d at %d", i, c.StartByte, i-1, prevStart)
		case c.StartLine != lineAt[c.StartByte] || c.EndLine != lineAt[c.EndByte-1]:
			return sprintf("chunk %d: lines %d-%d, want %d-%d", i, c.StartLine, c.EndLine, lineAt[c.StartByte], lineAt[c.EndByte-1])
		case isBlank(c.Text):
			return sprintf("chunk %d is blank", i)
		}
		if n := o.Count(c.Text); n > o.MaxTokens || n != c.Tokens {
			return sprintf("chunk %d counts %d tokens (Tokens %d), MaxTokens %d", i, n, c.Tokens, o.MaxTokens)
		}
		r, size := utf8.DecodeLastRuneInString(c.Text)
		if isSpaceRune(r, size) {
			return sprintf("chunk %d ends in white space", i)
		}
		prevStart = c.StartByte
		covered[c.StartByte]++
		covered[c.EndByte]--
	}
	depth := 0
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRuneInString(src[i:])
		for k := i; k < i+size; k++ {
			depth += covered[k]
		}
		if depth == 0 && !isSpaceRune(r, size) {
			return sprintf("text dropped at byte %d (line %d): %q", i, lineAt[i], src[i:min(i+40, len(src))])
		}
		i += size
	}
	return ""
}

// repoRoot is the root of the sagasu repository, two levels up.
const repoRoot = "../.."

// realFile is a file to split in the property tests.
type realFile struct {
	path   string
	format doc.Format
}

func readFiles(t testing.TB, files []realFile) []doc.Document {
	t.Helper()
	var docs []doc.Document
	for _, f := range files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc.Document{URI: f.path, Format: f.format, Content: string(b)})
	}
	return docs
}

// repoFiles lists the repository's own markdown and Go files.
func repoFiles(t testing.TB) []realFile {
	t.Helper()
	var files []realFile
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // files come and go while others work in the tree
		}
		if d.IsDir() && path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		switch filepath.Ext(path) {
		case ".md":
			files = append(files, realFile{path, doc.FormatMarkdown})
		case ".go":
			files = append(files, realFile{path, doc.FormatGo})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// gorootFiles returns every step-th Go file under $GOROOT/src, in a fixed order.
func gorootFiles(t testing.TB, want int) []realFile {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	testenv.Need(t, err == nil, fmt.Sprintf("go env GOROOT: %v", err))
	root := filepath.Join(strings.TrimSpace(string(out)), "src")
	var all []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
			all = append(all, path)
		}
		return nil
	})
	testenv.Need(t, len(all) > 0, "no Go files under "+root)
	slices.Sort(all)
	step := max(1, len(all)/want)
	var files []realFile
	for i := 0; i < len(all); i += step {
		files = append(files, realFile{all[i], doc.FormatGo})
	}
	return files
}

// vitepressFiles lists the English and Japanese VitePress docs, or skips
// the test (fails it under CI=true) when they are absent.
func vitepressFiles(t testing.TB) []realFile {
	t.Helper()
	root := testenv.Shared(t, "vitepress-docs")
	var files []realFile
	for _, lang := range []string{"en", "ja"} {
		filepath.WalkDir(filepath.Join(root, lang), func(path string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(path, ".md") {
				files = append(files, realFile{path, doc.FormatMarkdown})
			}
			return nil
		})
	}
	return files
}

// sizes are the option sets every real file is split with.
var sizes = []Options{
	{MaxTokens: 32},
	{MaxTokens: 64, Overlap: 16},
	{MaxTokens: 200, Overlap: -1},
	{},
}

// splitAll checks the invariants for docs in their own format and as text
// (and Go as generic code), at every size.
func splitAll(t *testing.T, docs []doc.Document) {
	for _, d := range docs {
		formats := []doc.Format{d.Format, doc.FormatText}
		if d.Format == doc.FormatGo {
			formats = append(formats, doc.FormatCode)
		}
		for _, f := range formats {
			d.Format = f
			for _, opt := range sizes {
				checkSplit(t, d, opt)
			}
		}
	}
}

func TestPropertiesRepo(t *testing.T) {
	t.Parallel()
	splitAll(t, readFiles(t, repoFiles(t)))
}

func TestPropertiesGoroot(t *testing.T) {
	t.Parallel()
	splitAll(t, readFiles(t, gorootFiles(t, 300)))
}

func TestPropertiesVitepress(t *testing.T) {
	t.Parallel()
	splitAll(t, readFiles(t, vitepressFiles(t)))
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
