package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/doc"
)

// BenchmarkWalk walks a tree of 1,000 small markdown files in 20 folders.
func BenchmarkWalk(b *testing.B) {
	root := b.TempDir()
	for d := 0; d < 20; d++ {
		dir := filepath.Join(root, fmt.Sprintf("dir%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 50; f++ {
			text := fmt.Sprintf("# Page %d.%d\n\nSome text about page %d.\n", d, f, f)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%02d.md", f)), []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for b.Loop() {
		n := 0
		err := Walk(context.Background(), []string{root}, Options{}, func(doc.Document) error { n++; return nil }, nil)
		if err != nil || n != 1000 {
			b.Fatalf("walked %d files: %v", n, err)
		}
	}
}
