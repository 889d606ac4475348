// Package repocheck holds tests that guard the shape of the whole
// repository: one package doc per package, and a binary that links neither
// the testing package nor the fakes.
package repocheck
