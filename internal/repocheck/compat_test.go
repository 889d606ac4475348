package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// markdownHeadings returns the headings of a Markdown file by title (inline
// code marks dropped: "The sessions document oo-claude/sessions/v0") and
// by the anchor GitHub gives them.
func markdownHeadings(t *testing.T, path string) (titles, anchors map[string]bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	titles, anchors = map[string]bool{}, map[string]bool{}
	fence := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(l, "#"))
		title = strings.ReplaceAll(title, "`", "")
		titles[title] = true
		anchors[githubAnchor(title)] = true
	}
	return titles, anchors
}

// githubAnchor is the fragment GitHub gives a heading: lower case, spaces
// to hyphens, punctuation other than "-" and "_" dropped.
func githubAnchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// compatSection finds a section of COMPATIBILITY.md named in a comment:
// `COMPATIBILITY.md, "Knobs"`, `COMPATIBILITY.md ("Files")`,
// `COMPATIBILITY.md gives them under "..."`.
var compatSection = regexp.MustCompile(`COMPATIBILITY\.md[^".;]{0,40}"([^"]+)"`)

// mdLink is a link to a heading or a document: [text](#anchor),
// [text](FILE.md#anchor), [text](dir/FILE.md) or [text](../FILE.md#anchor),
// the path taken from the linking document's directory.
var mdLink = regexp.MustCompile(`\]\(((?:[A-Za-z_.]+/)*[A-Za-z_]+\.md)?(?:#([^)\s]+))?\)`)

// markdownDocs are the repository's documents whose links are checked.
var markdownDocs = []string{"README.md", "COMPATIBILITY.md", "BENCHMARKS.md", "docs/INTERNALS.md"}

// TestCompatibilityLinks: the documents' links hold. Every section of
// COMPATIBILITY.md a Go comment names is a heading there; every
// "(#anchor)" link of the repository's Markdown documents names a heading
// of its file; and the doc comments of the public packages point a reader
// who meets "v0.1" to COMPATIBILITY.md (the contract's only copy in the
// repository) and carry no lab notes ("measured on ...": measurements
// belong in COMPATIBILITY.md and BENCHMARKS.md).
func TestCompatibilityLinks(t *testing.T) {
	root := moduleRoot(t)
	compat, _ := markdownHeadings(t, filepath.Join(root, "COMPATIBILITY.md"))

	named := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, cg := range f.Comments {
			text := strings.Join(strings.Fields(cg.Text()), " ")
			for _, m := range compatSection.FindAllStringSubmatch(text, -1) {
				named++
				if !compat[m[1]] {
					t.Errorf("%s: names COMPATIBILITY.md's section %q, which it does not have", rel, m[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if named < 10 {
		t.Errorf("only %d comments name a section of COMPATIBILITY.md; is the pattern still the one the comments use?", named)
	}

	for _, doc := range markdownDocs {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			if m[1] == "" && m[2] == "" {
				continue
			}
			target := doc
			if m[1] != "" {
				target = filepath.Join(filepath.Dir(doc), m[1])
			}
			if _, err := os.Stat(filepath.Join(root, target)); err != nil {
				t.Errorf("%s: the link to %s names no document: %v", doc, m[1], err)
				continue
			}
			if m[2] == "" {
				continue
			}
			if _, anchors := markdownHeadings(t, filepath.Join(root, target)); !anchors[m[2]] {
				t.Errorf("%s: the link to %s#%s names no heading there", doc, target, m[2])
			}
		}
	}

	labNote := regexp.MustCompile(`(?i)measured on|we measured|\(measured\)`)
	for _, p := range publicPackages(t, root) {
		for _, f := range p.files {
			for _, cg := range docComments(f) {
				text := strings.Join(strings.Fields(cg.Text()), " ")
				pos := p.fset.Position(cg.Pos())
				where := filepath.Join(p.path, filepath.Base(pos.Filename)) + ":" + strconv.Itoa(pos.Line)
				if strings.Contains(text, "v0.1") && !strings.Contains(text, "COMPATIBILITY.md") && p.path != "." {
					t.Errorf("%s: a doc comment speaks of v0.1 without naming COMPATIBILITY.md (and its section), where a reader finds it: %.80q", where, text)
				}
				if loc := labNote.FindStringIndex(text); loc != nil {
					t.Errorf("%s: a lab note in a doc comment (%q); the measurement belongs in COMPATIBILITY.md or BENCHMARKS.md", where, text[loc[0]:])
				}
			}
		}
	}
}

// docComments are the comments godoc shows: the package doc and the docs
// of exported declarations, their specs and exported struct fields, and
// the trailing comments of those specs and fields; not the comments of
// unexported names or inside function bodies.
func docComments(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	add := func(cgs ...*ast.CommentGroup) {
		for _, cg := range cgs {
			if cg != nil {
				out = append(out, cg)
			}
		}
	}
	exported := func(ids []*ast.Ident) bool {
		return slices.ContainsFunc(ids, func(id *ast.Ident) bool { return id.IsExported() })
	}
	add(f.Doc)
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() {
				add(d.Doc)
			}
		case *ast.GenDecl:
			var docs []*ast.CommentGroup
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					docs = append(docs, s.Doc, s.Comment)
					ast.Inspect(s.Type, func(n ast.Node) bool {
						if fld, ok := n.(*ast.Field); ok && (len(fld.Names) == 0 || exported(fld.Names)) {
							docs = append(docs, fld.Doc, fld.Comment)
						}
						return true
					})
				case *ast.ValueSpec:
					if exported(s.Names) {
						docs = append(docs, s.Doc, s.Comment)
					}
				}
			}
			if len(docs) > 0 {
				add(d.Doc)
				add(docs...)
			}
		}
	}
	return out
}
