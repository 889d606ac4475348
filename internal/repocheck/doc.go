// Package repocheck holds tests that guard the shape of the whole
// repository:
//
//   - one package doc per package (TestPackageDocs) and a root package
//     map that names every package (TestRootDocMap);
//   - a binary that links neither the testing package nor the fakes
//     (TestBinaryDeps);
//   - the README's commands and Go blocks (TestReadmeSetUp, TestReadmeGo),
//     its length (TestReadmeLength) and the examples, built outside the module
//     (TestExamplesOutsideTheModule);
//   - the floors of the import graph (TestFloors: a package imports only
//     packages on lower floors; its table and rules are in floors_test.go);
//   - the exported API, pinned in testdata/api.txt (TestAPI: a deliberate
//     change is written with `go test ./internal/repocheck -run TestAPI
//     -update` and reviewed in the file's diff), no exported variable but
//     error sentinels (TestNoExportedState), and no internal type or name
//     in the public API or its docs (TestNoInternalTypes,
//     TestDocsNameNoInternals, TestAliasDocsListTheFields);
//   - no exported function of a public package (nor a method that takes a
//     context) panics or hangs on zero or hostile input (TestNoPanic, with
//     TestNoPanicComplete holding its table to every such function), nor
//     does a method on a zero or nil receiver (TestZeroReceivers,
//     TestReceiversComplete);
//   - the documents' links (TestCompatibilityLinks: the COMPATIBILITY.md
//     sections comments name exist, the Markdown links and anchors resolve, and doc
//     comments point to COMPATIBILITY.md instead of v0.1's spec and carry
//     no lab notes).
package repocheck
