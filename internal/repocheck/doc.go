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
//     packages on lower floors, or on its own floor in the order
//     floorOrder lists; the table and rules are in floors_test.go);
//   - the exported API, pinned in testdata/api.txt (TestAPI: a deliberate
//     change is written with `go test ./internal/repocheck -run TestAPI
//     -update` and reviewed in the file's diff), no exported variable but
//     error sentinels (TestNoExportedState), and no internal type or name
//     in the public API or its docs, nor a public alias of an internal
//     type (TestNoInternalTypes, TestDocsNameNoInternals,
//     TestValuesNameNoInternals);
//   - the exported functions of the public packages (and the methods that
//     take a context) do not panic or hang on zero or hostile input
//     (TestNoPanic), nor do the exported methods on zero values
//     (TestZeroReceivers);
//   - the documents' links (TestCompatibilityLinks: the COMPATIBILITY.md
//     sections comments name exist, the Markdown links and anchors resolve, and doc
//     comments point to COMPATIBILITY.md instead of v0.1's spec and carry
//     no lab notes).
package repocheck
