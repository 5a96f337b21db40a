// Package tabletest checks, for a store package's tests, that its Pebble
// tables' key prefixes are declared once and cannot overlap: every const
// named table* in the package's own files is listed in its tables slice,
// the slice holds nothing else, and no prefix begins another (a scan of
// one table would otherwise read another's keys).
package tabletest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// eachConst calls fn with the name and value of every const that the
// package in dir declares in its non-test files.
func eachConst(t testing.TB, dir string, fn func(name string, value ast.Expr)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if i < len(vs.Values) {
						fn(id.Name, vs.Values[i])
					}
				}
			}
		}
	}
}

// Consts returns the value of every const named table* that the package
// in dir declares in its non-test files, by name.
func Consts(t testing.TB, dir string) map[string]string {
	t.Helper()
	consts := map[string]string{}
	eachConst(t, dir, func(name string, value ast.Expr) {
		if !strings.HasPrefix(name, "table") {
			return
		}
		lit, ok := value.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Errorf("const %s is not a string literal", name)
			return
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		consts[name] = v
	})
	return consts
}

// Check checks the package in dir (the test's own, ".") against its
// tables slice; min is the fewest tables it must declare, so that a test
// that finds no consts at all (a renamed file) fails.
func Check(t testing.TB, dir string, tables []string, min int) {
	t.Helper()
	consts := Consts(t, dir)
	if len(consts) < min {
		t.Errorf("found %d table consts %v, want at least %d", len(consts), consts, min)
	}
	for name, v := range consts {
		if !slices.Contains(tables, v) {
			t.Errorf("const %s = %q is not listed in tables %q", name, v, tables)
		}
	}
	if len(tables) != len(consts) {
		t.Errorf("tables has %d entries %q, want the %d table consts", len(tables), tables, len(consts))
	}
	for i, a := range tables {
		if a == "" || !strings.HasSuffix(a, "/") {
			t.Errorf("table prefix %q: want a non-empty prefix ending in /", a)
		}
		for j, b := range tables {
			if i != j && strings.HasPrefix(b, a) {
				t.Errorf("table prefix %q (tables[%d]) is a prefix of %q (tables[%d])", a, i, b, j)
			}
		}
	}
}

// CheckBytes checks a package whose tables are one-byte prefixes (consts
// named t followed by an upper-case letter, of character literals, such
// as tBucket = 'b'): at least min of them, and no two alike.
func CheckBytes(t testing.TB, dir string, min int) {
	t.Helper()
	byValue := map[string]string{}
	eachConst(t, dir, func(n string, value ast.Expr) {
		if len(n) < 2 || n[0] != 't' || n[1] < 'A' || n[1] > 'Z' {
			return
		}
		lit, ok := value.(*ast.BasicLit)
		if !ok || lit.Kind != token.CHAR {
			t.Errorf("table const %s is not a character literal", n)
			return
		}
		if other, dup := byValue[lit.Value]; dup {
			t.Errorf("tables %s and %s share the prefix %s", other, n, lit.Value)
		}
		byValue[lit.Value] = n
	})
	if len(byValue) < min {
		t.Errorf("found %d table consts %v, want at least %d", len(byValue), byValue, min)
	}
}
