package chunk

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// goGroups cuts Go source into its package clause with the imports, and one
// group per top-level declaration with its doc comment. Source that does not
// parse is treated as generic code.
func (s *splitter) goGroups() []group {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", s.src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return []group{{start: 0, end: len(s.src), k: kCodeDoc}}
	}
	tf := fset.File(f.Package)
	off := func(p token.Pos) int { return min(max(tf.Offset(p), 0), len(s.src)) }

	type decl struct {
		start, end int
		heading    string
	}
	var decls []decl
	headerEnd := s.nextLine(off(f.Name.End()), len(s.src))
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			headerEnd = max(headerEnd, s.nextLine(off(g.End()), len(s.src)))
			continue // imports stay with the package clause
		}
		start := off(d.Pos())
		if doc := declDoc(d); doc != nil {
			start = off(doc.Pos())
		}
		decls = append(decls, decl{start, off(d.End()), s.goHeading(d, off)})
	}

	groups := []group{{start: 0, end: len(s.src), heading: []string{"package " + f.Name.Name}, k: kCodeDoc}}
	if len(decls) > 0 {
		groups[0].end = headerEnd
	}
	for i, d := range decls {
		prev := &groups[len(groups)-1]
		prev.end = max(min(d.start, prev.end), prev.start)
		end := len(s.src)
		if i+1 < len(decls) {
			// A declaration ends with its line (and a comment on it), unless
			// the next one starts on that line.
			end = min(s.nextLine(d.end, len(s.src)), max(decls[i+1].start, d.end))
		}
		groups = append(groups, group{start: prev.end, end: end, heading: []string{d.heading}, k: kCodeDoc})
	}
	return groups
}

// declDoc returns the doc comment of a declaration, if any.
func declDoc(d ast.Decl) *ast.CommentGroup {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return d.Doc
	case *ast.GenDecl:
		return d.Doc
	}
	return nil
}

// goHeading names a declaration the way a reader looks for it:
// "func (s *Store) Put", "type Store", "const (A, B, C, …)".
func (s *splitter) goHeading(d ast.Decl, off func(token.Pos) int) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		h := "func "
		if d.Recv != nil && d.Recv.Opening.IsValid() && d.Recv.Closing.IsValid() {
			recv := s.src[off(d.Recv.Opening):off(d.Recv.Closing+1)]
			h += strings.Join(strings.Fields(recv), " ") + " "
		}
		return h + d.Name.Name
	case *ast.GenDecl:
		var names []string
		for _, spec := range d.Specs {
			switch spec := spec.(type) {
			case *ast.TypeSpec:
				names = append(names, spec.Name.Name)
			case *ast.ValueSpec:
				for _, n := range spec.Names {
					names = append(names, n.Name)
				}
			}
		}
		const maxNames = 3
		list := names
		if len(list) > maxNames {
			list = append(list[:maxNames:maxNames], "…")
		}
		if d.Lparen.IsValid() {
			return d.Tok.String() + " (" + strings.Join(list, ", ") + ")"
		}
		return d.Tok.String() + " " + strings.Join(list, ", ")
	}
	return "declaration"
}
