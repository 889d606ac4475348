package repocheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The floors of ARCHITECTURE.md: a package imports only module packages on
// lower floors, or on its own floor along floorOrder. Floor 0 is the
// internal plumbing, which imports nothing of the module but plumbing
// below it in floorOrder. The side packages (the fakes, the examples, the
// end-to-end suite, the repository's own test tooling) may import any
// floor and one another, and no floor imports them. Paths are relative to
// the module; a package missing here fails the test until it is given a
// place.
var floors = map[string]int{
	"cli/oo-claude": 4,
	// The doorman program, which `oo-claude doorman` execs, and its run.
	"cli/oo-claude-doorman": 4,
	"internal/doormancmd":   4,
	// The top program, which `oo-claude top` execs, its run and its view.
	"cli/oo-claude-top": 4,
	"internal/topcmd":   4,
	"internal/top":      4,

	"fleet":       3,
	"doorman":     3,
	"headless":    3,
	"observatory": 3,
	"doctor":      3,

	"claudeinbox": 2,
	"door":        2,
	"transcript":  2,
	"lineage":     2,

	"station": 1,
	"receipt": 1,
	"inboxv1": 1, // the inbox contract's types and constants
	// The contract's I/O, the transcript file layer and the claude
	// process runner: below the public packages that use them.
	"internal/inbox":          1,
	"internal/transcriptfile": 1,
	"internal/claudeproc":     1,

	"internal/fsx":       0,
	"internal/hangup":    0,
	"internal/ids":       0,
	"internal/ingress":   0,
	"internal/jsonrow":   0,
	"internal/jsonscan":  0,
	"internal/jsonw":     0,
	"internal/progress":  0,
	"internal/riderwalk": 0,
	"internal/seconds":   0,
	"internal/termsafe":  0,
	"internal/version":   0,
	// What oo-claude asks of the doorman and top programs: command lines.
	"internal/doormanreq": 0,
	"internal/topreq":     0,
	// The programs oo-claude runs beside itself, and the rule it finds
	// them by.
	"internal/programs": 0,
}

// floorOrder is the order within a floor, as go/build's deps_test orders
// the standard library: the arrows allowed between two packages on one
// floor, each with why it points that way. Any other arrow on one floor is
// sideways and fails. (The language forbids an import cycle, so the
// arrows stay a partial order.)
var floorOrder = map[[2]string]string{
	// Floor 4: each program's main runs its run; the top program runs
	// the view.
	{"cli/oo-claude-doorman", "internal/doormancmd"}: "the doorman program's main runs the doorman's run",
	{"cli/oo-claude-top", "internal/topcmd"}:         "the top program's main runs the view's run",
	{"internal/topcmd", "internal/top"}:              "top is the program's view of the observatory and the sender",
	// Floor 3: the fleet returns the local calls' own typed results
	// from other stations.
	{"fleet", "observatory"}: "the fleet merges the observatory's documents and event streams",
	{"fleet", "headless"}:    "the fleet's resume and start return headless's results",
	// Floor 2: the sender's default witness reads transcripts.
	{"claudeinbox", "transcript"}: "NewSender sets transcript.Witness, the real witness of the seen and reply waits",
	// Floor 1: the contract's I/O reads and writes the contract's types;
	// the claude process runner reads the station's process table.
	{"internal/inbox", "inboxv1"}:      "internal/inbox reads and writes the contract's types",
	{"internal/claudeproc", "station"}: "the claude process runner reads the station's process table",
	// Floor 0: the live status line uses termsafe's escapes; the riders'
	// walk lists and opens through fsx's checked directory.
	{"internal/progress", "internal/termsafe"}: "the status line writes through termsafe",
	{"internal/riderwalk", "internal/fsx"}:     "the riders' walk holds each directory open with fsx.Dir, so its riders are stat'ed and opened relative to it",
}

// binaryFloor is the floor of the binary, cli/oo-claude.
const binaryFloor = 4

// sidePrefixes are the side packages, by path prefix.
var sidePrefixes = []string{"fakes/", "examples/", "e2e", "internal/hostile", "internal/repocheck", "internal/cmd/"}

// binaryOnly are packages only the binary's floor (and the repository's
// own tooling among the side packages, under internal/) may import: the
// library, the internal plumbing, the fakes and the examples take what
// they hold from their caller.
var binaryOnly = []string{"internal/version"}

// checkFloors returns the rules graph breaks, one line per offending arrow
// ("a → b: why"), sorted. graph maps each module package to the module
// packages it imports; order holds the arrows allowed within a floor.
func checkFloors(graph map[string][]string, floors map[string]int, side, binaryOnly []string, order map[[2]string]string) []string {
	isSide := func(p string) bool {
		return slices.ContainsFunc(side, func(pre string) bool { return p == strings.TrimSuffix(pre, "/") || strings.HasPrefix(p, pre) })
	}
	var bad []string
	for from, imports := range graph {
		ff, placed := floors[from]
		if !placed && !isSide(from) {
			bad = append(bad, fmt.Sprintf("%s: on no floor; give it one in floors_test.go", from))
			continue
		}
		for _, to := range imports {
			arrow := [2]string{from, to}
			var why string
			tf, toPlaced := floors[to]
			switch {
			case slices.Contains(binaryOnly, to) && ff < binaryFloor && !(isSide(from) && strings.HasPrefix(from, "internal/")):
				why = fmt.Sprintf("%s is the binary's; the library takes it from its caller", to)
			case isSide(from):
				continue
			case isSide(to):
				why = fmt.Sprintf("%s is a side package (fakes, examples, tests); no floor imports it", to)
			case !toPlaced:
				continue // reported as on no floor
			case tf == ff:
				if _, ok := order[arrow]; ok {
					continue
				}
				why = fmt.Sprintf("sideways: both on floor %d, and not in floorOrder", ff)
			case tf > ff:
				why = fmt.Sprintf("upwards: floor %d imports floor %d", ff, tf)
			default:
				continue
			}
			bad = append(bad, fmt.Sprintf("%s → %s: %s", from, to, why))
		}
	}
	slices.Sort(bad)
	return bad
}

// importGraph is the module's packages and their non-test imports within
// the module, from `go list -json ./...`.
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	const module = "github.com/oo-family/oo-claude"
	rel := func(p string) (string, bool) {
		if p == module {
			return ".", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	graph := map[string][]string{}
	for d := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := d.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		from, _ := rel(p.ImportPath)
		graph[from] = []string{}
		for _, imp := range p.Imports {
			if to, ok := rel(imp); ok {
				graph[from] = append(graph[from], to)
			}
		}
	}
	return graph
}

// TestFloors holds the module's import graph to the floors.
func TestFloors(t *testing.T) {
	graph := importGraph(t)
	if len(graph) < 10 {
		t.Fatalf("go list found only %d packages", len(graph))
	}
	floors := maps.Clone(floors)
	if imps, ok := graph["."]; ok {
		// The root package is the package map: documentation only.
		floors["."] = binaryFloor
		if len(imps) > 0 {
			t.Errorf("the root package imports %q; it holds only the package map", imps)
		}
	}
	for _, bad := range checkFloors(graph, floors, sidePrefixes, binaryOnly, floorOrder) {
		t.Error(bad)
	}
}

// TestCheckFloors: the rules over synthetic graphs, and a few arrows over
// the real floor table; each wrong arrow is named.
func TestCheckFloors(t *testing.T) {
	small := map[string]int{"cli": binaryFloor, "doorman": 3, "headless": 3, "door": 2, "transcript": 2, "station": 1, "internal/fsx": 0, "internal/version": 0}
	side := []string{"fakes/", "e2e", "internal/repocheck"}
	smallBinaryOnly := []string{"internal/version"}
	tests := []struct {
		name  string
		graph map[string][]string
		order map[[2]string]string
		want  []string
	}{
		{"downwards only", map[string][]string{
			"cli": {"doorman", "station", "internal/version"}, "doorman": {"door", "station", "internal/fsx"},
			"door": {"station"}, "station": {"internal/fsx"}, "internal/fsx": {}, "fakes/fakedoor": {"door", "fakes/fakestation"},
			"e2e": {"fakes/fakedoor", "cli"},
		}, nil, nil},
		{"sideways", map[string][]string{"door": {"transcript"}, "transcript": {}},
			nil, []string{"door → transcript: sideways: both on floor 2, and not in floorOrder"}},
		{"sideways on floor 3", map[string][]string{"doorman": {"headless"}, "headless": {}},
			nil, []string{"doorman → headless: sideways: both on floor 3, and not in floorOrder"}},
		{"upwards", map[string][]string{"station": {"doorman"}, "doorman": {}},
			nil, []string{"station → doorman: upwards: floor 1 imports floor 3"}},
		{"plumbing imports the module", map[string][]string{"internal/fsx": {"station"}},
			nil, []string{"internal/fsx → station: upwards: floor 0 imports floor 1"}},
		{"a floor imports a fake", map[string][]string{"doorman": {"fakes/fakedoor"}},
			nil, []string{"doorman → fakes/fakedoor: fakes/fakedoor is a side package (fakes, examples, tests); no floor imports it"}},
		{"the library imports the binary's version", map[string][]string{"transcript": {"internal/version"}},
			nil, []string{"transcript → internal/version: internal/version is the binary's; the library takes it from its caller"}},
		{"internal plumbing imports the binary's version", map[string][]string{"internal/fsx": {"internal/version"}},
			nil, []string{"internal/fsx → internal/version: internal/version is the binary's; the library takes it from its caller"}},
		{"a fake imports the binary's version", map[string][]string{"fakes/fakedoor": {"internal/version"}},
			nil, []string{"fakes/fakedoor → internal/version: internal/version is the binary's; the library takes it from its caller"}},
		{"the repository's tooling imports the binary's version", map[string][]string{"internal/repocheck": {"internal/version"}}, nil, nil},
		{"a package on no floor", map[string][]string{"newpkg": {"station"}},
			nil, []string{"newpkg: on no floor; give it one in floors_test.go"}},
		{"ordered within the floor", map[string][]string{"door": {"transcript"}},
			map[[2]string]string{{"door", "transcript"}: "why"}, nil},
		{"the order has a direction", map[string][]string{"transcript": {"door"}},
			map[[2]string]string{{"door", "transcript"}: "why"}, []string{"transcript → door: sideways: both on floor 2, and not in floorOrder"}},
	}
	// The real table (floors, floorOrder, sidePrefixes, binaryOnly): the
	// issue's own sideways example, the order within floors 1 and 3 and
	// its direction, and the binary's version kept out of the library.
	realTests := []struct {
		name  string
		graph map[string][]string
		want  []string
	}{
		{"real floors: doctor reads the observatory", map[string][]string{"doctor": {"observatory"}},
			[]string{"doctor → observatory: sideways: both on floor 3, and not in floorOrder"}},
		{"real floors: the contract's I/O uses the contract", map[string][]string{"internal/inbox": {"inboxv1"}, "fleet": {"observatory"}}, nil},
		{"real floors: the contract imports nothing of floor 1", map[string][]string{"inboxv1": {"internal/inbox"}},
			[]string{"inboxv1 → internal/inbox: sideways: both on floor 1, and not in floorOrder"}},
		{"real floors: the inbox contract imports the binary's version", map[string][]string{"internal/inbox": {"internal/version"}},
			[]string{"internal/inbox → internal/version: internal/version is the binary's; the library takes it from its caller"}},
		{"real floors: the repository's tooling may", map[string][]string{"internal/repocheck": {"internal/version", "doctor"}, "internal/cmd/x": {"internal/version"}},
			nil},
		{"real floors: a fake may not", map[string][]string{"fakes/fakedoorman": {"internal/version"}},
			[]string{"fakes/fakedoorman → internal/version: internal/version is the binary's; the library takes it from its caller"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkFloors(tt.graph, small, side, smallBinaryOnly, tt.order)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("checkFloors (-want +got):\n%s", diff)
			}
		})
	}
	for _, tt := range realTests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkFloors(tt.graph, floors, sidePrefixes, binaryOnly, floorOrder)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("checkFloors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRootDocMap: `go doc github.com/oo-family/oo-claude` prints the
// package map, and the map names every package on a floor.
func TestRootDocMap(t *testing.T) {
	cmd := exec.Command("go", "doc", "github.com/oo-family/oo-claude")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go doc: %v\n%s", err, out)
	}
	for p := range floors {
		if strings.HasPrefix(p, "internal/") {
			continue // plumbing, named as internal/...
		}
		if !strings.Contains(string(out), " "+p+" ") {
			t.Errorf("the package map does not name %s:\n%s", p, out)
		}
	}
	if !strings.Contains(string(out), "COMPATIBILITY.md") {
		t.Errorf("the package map does not point to COMPATIBILITY.md")
	}
}
