package observatory

// TreeNode is one session's place in the lineage tree of a document: its
// index in Document.Sessions and its depth (0 for a root).
type TreeNode struct {
	Index int
	Depth int
}

// Tree orders the document's sessions depth first by lineage: every
// session whose parent is not among them is a root (in the document's
// order), each followed by its children (their parent_session names it),
// each of those by its own. A session that is its own parent is a root; a
// cycle in the ledger is cut where it closes, and sessions caught in a
// cycle without a root are listed flat after the rest. Every session is
// listed once.
func (d *Document) Tree() []TreeNode {
	sessions := d.Sessions
	idx := make(map[string]int, len(sessions))
	for i, s := range sessions {
		idx[s.Session] = i
	}
	parentOf := func(s Session) (int, bool) {
		if s.ParentSession == "" {
			return 0, false
		}
		p, ok := idx[string(s.ParentSession)]
		return p, ok && sessions[p].Session != s.Session
	}
	kids := make(map[int][]int)
	var roots []int
	for i, s := range sessions {
		if p, ok := parentOf(s); ok {
			kids[p] = append(kids[p], i)
		} else {
			roots = append(roots, i)
		}
	}
	out := make([]TreeNode, 0, len(sessions))
	seen := make([]bool, len(sessions))
	// An explicit stack, not recursion: a chain of any depth is walked.
	type frame struct{ i, depth int }
	walk := func(root int) {
		stack := []frame{{root, 0}}
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[f.i] {
				continue
			}
			seen[f.i] = true
			out = append(out, TreeNode{Index: f.i, Depth: f.depth})
			k := kids[f.i]
			for j := len(k) - 1; j >= 0; j-- {
				stack = append(stack, frame{k[j], f.depth + 1})
			}
		}
	}
	for _, r := range roots {
		walk(r)
	}
	for i := range sessions {
		walk(i)
	}
	return out
}
