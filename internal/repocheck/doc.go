// Package repocheck holds tests that guard the shape of the whole
// repository: one package doc per package, a binary that links neither the
// testing package nor the fakes, the README's commands and Go blocks, and
// the floors of the import graph (TestFloors: a package imports only
// packages on lower floors; its table and rules are in floors_test.go), and
// that no exported function of a public package (nor a method that takes
// a context) panics or hangs on zero or hostile input (TestNoPanic, with
// TestNoPanicComplete holding its table to every such function), and that
// the documents' links hold (TestCompatibilityLinks: the COMPATIBILITY.md
// sections comments name exist, the Markdown anchors resolve, and doc
// comments point to COMPATIBILITY.md instead of v0.1's spec and carry no
// lab notes), and that the public packages export no variables but error
// sentinels (TestNoExportedState).
package repocheck
