//go:build race

package main

// raceEnabled: the tests run with the race detector, whose shadow memory
// adds to a child's resident set.
const raceEnabled = true
