// Package glue is the glue a program writes around the library, one test
// per row, each row's own code between its marker comments (at most three
// lines, which the repository's checks count): (a) a start that returns
// once the session is steerable, (b) a verdict's next step, (c) a program
// that is its own doorman, (d) a throttled line sent again, (e) a start
// with a known lineage parent, (f) per-call waits on NewSender's sender.
// The tests run on the fakes: a fake claude plays a steerable session
// whose doorman is this test binary, a fake session answers lines.
package glue
