package arch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rule places a component, a set of packages, in the import arrows
// (README.md, "Layout").
type rule struct {
	// name is the component's name in the arrows.
	name string
	// patterns are module-relative package paths. Each element is matched
	// with path.Match; a final "..." matches zero or more further elements.
	patterns []string
	// arrows name the components this one may import directly. A component
	// may depend on the transitive closure of its arrows.
	arrows []string
	// open marks a component that every package may import.
	open bool
}

// rules is the table of the import arrows README.md's "Layout" states.
func rules() []rule {
	return []rule{
		{name: "frontier", patterns: []string{"core/frontier"}},
		{name: "batch", patterns: []string{"core/batch"}, arrows: []string{"frontier"}},
		{name: "spine", patterns: []string{"core/spine"}, arrows: []string{"batch"}},
		{name: "trace", patterns: []string{"core/trace"}, arrows: []string{"spine"}},
		{name: "share", patterns: []string{"core/share"}, arrows: []string{"trace"}},
		{name: "dataflow", patterns: []string{"core/dataflow"}, arrows: []string{"share", "expr"}},
		{name: "expr", patterns: []string{"core/expr"}},
		{name: "join", patterns: []string{"core/join"}, arrows: []string{"dataflow", "expr"}},
		{name: "reduce", patterns: []string{"core/reduce"}, arrows: []string{"dataflow", "expr"}},
		{name: "plan", patterns: []string{"core/plan"}, arrows: []string{"expr"}},
		{name: "render", patterns: []string{"core/render"}, arrows: []string{"join", "reduce", "plan"}},
		// runtime runs dataflow.Descs whoever builds them; render builds
		// them from plans. Neither needs the other: workloads joins them.
		{name: "runtime", patterns: []string{"core/runtime"}, arrows: []string{"dataflow"}},
		{name: "reference", patterns: []string{"core/reference"}, arrows: []string{"plan"}},
		{name: "workloads", patterns: []string{"workloads/..."}, arrows: []string{"runtime", "render", "reference", "plan"}},
		{name: "bench", patterns: []string{"internal/bench*/..."}, arrows: []string{"workloads"}},
		{name: "cmd", patterns: []string{"cmd/*/..."}, arrows: []string{"bench"}},
		{name: "invariants", patterns: []string{"internal/invariants"}, open: true},
		// isnil imports nothing of the module: core/trace, core/share and
		// core/dataflow tell a typed nil argument with it.
		{name: "isnil", patterns: []string{"internal/isnil"}, open: true},
		{name: "scripttest", patterns: []string{"internal/scripttest"}, open: true},
		{name: "labelstest", patterns: []string{"internal/labelstest"}, open: true},
		{name: "guardtest", patterns: []string{"internal/guardtest"}, open: true},
		{name: "mutants", patterns: []string{"internal/mutants"}, open: true},
		{name: "arch", patterns: []string{"internal/arch"}},
		{name: "docs", patterns: []string{"internal/docs"}},
	}
}

// forbiddenFromCore are the patterns nothing in core/ may depend on (A3).
var forbiddenFromCore = []string{"workloads/...", "internal/bench*/...", "cmd/..."}

// badNames are package names the layout rules out (A4).
var badNames = []string{"util", "utils", "common"}

// pkg is what the checker needs to know about one package of the module.
// Paths are relative to the module root ("." for the root package) and name
// only packages of the module.
type pkg struct {
	rel     string
	name    string
	imports []string // direct
	deps    []string // transitive
}

// match reports whether the module-relative path rel matches pattern.
func match(pattern, rel string) bool {
	pe, re := strings.Split(pattern, "/"), strings.Split(rel, "/")
	for i, p := range pe {
		if p == "..." && i == len(pe)-1 {
			return true
		}
		if i >= len(re) {
			return false
		}
		if ok, _ := path.Match(p, re[i]); !ok {
			return false
		}
	}
	return len(pe) == len(re)
}

// checker checks packages against a validated rules table.
type checker struct {
	rules   []rule
	byName  map[string]rule
	allowed map[string]map[string]bool // component -> closure of its arrows
}

// newChecker validates rs: unique names, arrows naming known components, no
// cycle, and computes the closure of every component's arrows.
func newChecker(rs []rule) (*checker, error) {
	c := &checker{rules: rs, byName: map[string]rule{}, allowed: map[string]map[string]bool{}}
	for _, r := range rs {
		if _, dup := c.byName[r.name]; dup {
			return nil, fmt.Errorf("rules: component %q defined twice", r.name)
		}
		if len(r.patterns) == 0 {
			return nil, fmt.Errorf("rules: component %q has no patterns", r.name)
		}
		c.byName[r.name] = r
	}
	for _, r := range rs {
		for _, a := range r.arrows {
			if _, ok := c.byName[a]; !ok {
				return nil, fmt.Errorf("rules: component %q has an arrow to unknown component %q", r.name, a)
			}
		}
	}
	for _, r := range rs {
		reach := map[string]bool{}
		stack := slices.Clone(r.arrows)
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if reach[n] {
				continue
			}
			reach[n] = true
			stack = append(stack, c.byName[n].arrows...)
		}
		if reach[r.name] {
			return nil, fmt.Errorf("rules: component %q reaches itself through its arrows (a cycle)", r.name)
		}
		c.allowed[r.name] = reach
	}
	return c, nil
}

// component returns the components whose patterns match rel.
func (c *checker) component(rel string) []string {
	var out []string
	for _, r := range c.rules {
		if slices.ContainsFunc(r.patterns, func(p string) bool { return match(p, rel) }) {
			out = append(out, r.name)
		}
	}
	return out
}

// may reports whether a package of component from may depend on rel.
func (c *checker) may(from, rel string) bool {
	to := c.component(rel)
	if len(to) != 1 {
		return false // unclassified or ambiguous: reported on its own as well
	}
	return to[0] == from || c.byName[to[0]].open || c.allowed[from][to[0]]
}

// check returns one line per problem found in pkgs, in a stable order.
func (c *checker) check(pkgs []pkg) []string {
	byRel := map[string]pkg{}
	for _, p := range pkgs {
		byRel[p.rel] = p
	}
	pkgs = slices.SortedFunc(maps.Values(byRel), func(a, b pkg) int { return strings.Compare(a.rel, b.rel) })

	var problems []string
	for _, p := range pkgs {
		if slices.Contains(badNames, p.name) || slices.Contains(badNames, path.Base(p.rel)) {
			problems = append(problems, fmt.Sprintf(
				"%s: package %s: the layout allows no util or common package; name the package after what it provides",
				p.rel, p.name))
		}
		if strings.HasPrefix(p.rel, "core/") {
			for _, d := range p.deps {
				if !slices.ContainsFunc(forbiddenFromCore, func(f string) bool { return match(f, d) }) {
					continue
				}
				// Report where the chain leaves core/, not at every core
				// package above that point.
				chain := c.chain(byRel, p.rel, d)
				if chain != nil && strings.HasPrefix(chain[1], "core/") {
					continue
				}
				problems = append(problems, fmt.Sprintf(
					"%s depends on %s (%s): nothing in core/ may depend on workloads/, internal/bench* or cmd/",
					p.rel, d, formatChain(chain, p.rel, d)))
			}
		}
		comps := c.component(p.rel)
		switch {
		case len(comps) == 0:
			problems = append(problems, fmt.Sprintf(
				"%s: package is not in the arrows rules; add it to rules() in internal/arch/arch_test.go (and to README.md's Layout if it is a new component)",
				p.rel))
			continue
		case len(comps) > 1:
			problems = append(problems, fmt.Sprintf(
				"%s: package matches several components %v; make the patterns in rules() disjoint", p.rel, comps))
			continue
		}
		comp := comps[0]
		for _, d := range p.imports {
			if _, listed := byRel[d]; listed && len(c.component(d)) != 1 {
				continue // reported on its own: classifying it decides this import
			}
			if !c.may(comp, d) {
				problems = append(problems, fmt.Sprintf(
					"%s (%s) imports %s (%s): not allowed by the arrows; %s may depend on %s",
					p.rel, comp, d, c.describe(d), comp, c.allowedList(comp)))
			}
		}
		// Every transitive dependency must be allowed too. With a closed
		// rules table a bad transitive dependency has a bad direct import
		// on its path, reported above; the rest is reported here.
		for _, d := range p.deps {
			if slices.Contains(p.imports, d) || c.may(comp, d) {
				continue
			}
			chain := c.chain(byRel, p.rel, d)
			if chain != nil && c.hasBadEdge(chain) {
				continue
			}
			problems = append(problems, fmt.Sprintf(
				"%s (%s) depends on %s (%s) transitively (%s): not allowed by the arrows; %s may depend on %s",
				p.rel, comp, d, c.describe(d), formatChain(chain, p.rel, d), comp, c.allowedList(comp)))
		}
	}
	return problems
}

// describe names the component of rel for a message.
func (c *checker) describe(rel string) string {
	switch comps := c.component(rel); len(comps) {
	case 0:
		return "unclassified"
	case 1:
		return comps[0]
	default:
		return "ambiguous: " + strings.Join(comps, ", ")
	}
}

// allowedList lists what a component may depend on besides itself.
func (c *checker) allowedList(comp string) string {
	var names []string
	for _, r := range c.rules {
		if c.allowed[comp][r.name] || (r.open && r.name != comp) {
			names = append(names, r.name)
		}
	}
	if len(names) == 0 {
		return "nothing else in the module"
	}
	return "[" + strings.Join(names, " ") + "]"
}

// chain returns a shortest import chain from one package to another, or nil
// if their imports do not connect them.
func (c *checker) chain(byRel map[string]pkg, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n == to {
			var out []string
			for ; n != ""; n = prev[n] {
				out = append(out, n)
			}
			slices.Reverse(out)
			return out
		}
		for _, m := range byRel[n].imports {
			if _, seen := prev[m]; !seen {
				prev[m] = n
				queue = append(queue, m)
			}
		}
	}
	return nil
}

// formatChain formats a chain from chain for a message.
func formatChain(chain []string, from, to string) string {
	if chain == nil {
		return "via " + from + " -> ? -> " + to
	}
	return "via " + strings.Join(chain, " -> ")
}

// hasBadEdge reports whether some import along chain breaks the arrows.
func (c *checker) hasBadEdge(chain []string) bool {
	for i := 0; i+1 < len(chain); i++ {
		comps := c.component(chain[i])
		if len(comps) != 1 || !c.may(comps[0], chain[i+1]) {
			return true
		}
	}
	return false
}

// moduleRoot walks up from the working directory to the directory holding
// go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// listed is the part of `go list -json` output the test reads.
type listed struct {
	ImportPath string
	Name       string
	Imports    []string
	Deps       []string
	Module     *struct{ Path string }
	Error      *struct{ Err string }
}

// load lists the module's packages under the given build tags and returns
// them with module-relative paths, dropping dependencies outside the module.
func load(root, tags string) ([]pkg, []string, error) {
	args := []string{"list", "-e", "-json=ImportPath,Name,Imports,Deps,Module,Error"}
	if tags != "" {
		args = append(args, "-tags="+tags)
	}
	args = append(args, "./...")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	var all []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			return nil, nil, fmt.Errorf("decoding go list output: %v", err)
		}
		all = append(all, l)
	}
	mod := map[string]bool{}
	var modPath string
	for _, l := range all {
		mod[l.ImportPath] = true
		if l.Module != nil {
			modPath = l.Module.Path
		}
	}
	if modPath == "" {
		return nil, nil, errors.New("go list reported no module for the packages")
	}
	rel := func(ip string) string {
		if ip == modPath {
			return "."
		}
		return strings.TrimPrefix(ip, modPath+"/")
	}
	keep := func(ips []string) []string {
		var out []string
		for _, ip := range ips {
			if mod[ip] {
				out = append(out, rel(ip))
			}
		}
		return out
	}
	var pkgs []pkg
	var loadErrs []string
	for _, l := range all {
		if l.Error != nil {
			loadErrs = append(loadErrs, fmt.Sprintf("%s: %s", l.ImportPath, l.Error.Err))
		}
		pkgs = append(pkgs, pkg{rel: rel(l.ImportPath), name: l.Name, imports: keep(l.Imports), deps: keep(l.Deps)})
	}
	return pkgs, loadErrs, nil
}

// merge unions the imports and deps of the same package listed under
// several build configurations.
func merge(lists ...[]pkg) []pkg {
	byRel := map[string]*pkg{}
	var order []string
	for _, list := range lists {
		for _, p := range list {
			q, ok := byRel[p.rel]
			if !ok {
				q = &pkg{rel: p.rel, name: p.name}
				byRel[p.rel] = q
				order = append(order, p.rel)
			}
			if q.name == "" {
				q.name = p.name
			}
			for _, d := range p.imports {
				if !slices.Contains(q.imports, d) {
					q.imports = append(q.imports, d)
				}
			}
			for _, d := range p.deps {
				if !slices.Contains(q.deps, d) {
					q.deps = append(q.deps, d)
				}
			}
		}
	}
	out := make([]pkg, 0, len(order))
	for _, r := range order {
		out = append(out, *byRel[r])
	}
	return out
}

// TestArrows checks the module's packages against the arrows (A1–A4).
func TestArrows(t *testing.T) {
	c, err := newChecker(rules())
	if err != nil {
		t.Fatal(err)
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var lists [][]pkg
	for _, tags := range []string{"", "invariants", "mutants"} {
		pkgs, loadErrs, err := load(root, tags)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range loadErrs {
			// Broken packages are the compiler's to report; their imports
			// as far as go list could read them are still checked.
			t.Logf("tags %q: go list: %s", tags, e)
		}
		lists = append(lists, pkgs)
	}
	pkgs := merge(lists...)
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages in the module")
	}
	for _, p := range pkgs {
		t.Logf("%-24s %s", p.rel, c.describe(p.rel))
	}
	for _, problem := range c.check(pkgs) {
		t.Error(problem)
	}
}

// TestRules checks the rules table against statements of the layout.
func TestRules(t *testing.T) {
	c, err := newChecker(rules())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"frontier", "batch", false},
		{"batch", "frontier", true},
		{"batch", "spine", false},
		{"trace", "frontier", true},
		{"expr", "frontier", false},
		{"plan", "expr", true},
		{"plan", "batch", false},
		{"plan", "dataflow", false},
		{"join", "frontier", true},
		{"join", "reduce", false},
		{"reduce", "join", false},
		{"render", "share", true},
		{"render", "runtime", false},
		{"reference", "plan", true},
		{"reference", "expr", true},
		{"reference", "dataflow", false},
		{"runtime", "reference", false},
		{"workloads", "frontier", true},
		{"bench", "runtime", true},
		{"cmd", "frontier", true},
		{"cmd", "invariants", false}, // allowed only as open, see may
		{"invariants", "frontier", false},
		{"isnil", "frontier", false},
	} {
		if got := c.allowed[tc.from][tc.to]; got != tc.want {
			t.Errorf("closure(%s) contains %s = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
	// Core components reach only core components (A3 holds by the table).
	for _, r := range c.rules {
		if !strings.HasPrefix(r.patterns[0], "core/") {
			continue
		}
		for n := range c.allowed[r.name] {
			if q := c.byName[n].patterns[0]; !strings.HasPrefix(q, "core/") {
				t.Errorf("core component %s may depend on %s (%s)", r.name, n, q)
			}
		}
	}
	for _, tc := range []struct {
		pattern, rel string
		want         bool
	}{
		{"core/batch", "core/batch", true},
		{"core/batch", "core/batch/x", false},
		{"core/batch", "core", false},
		{"workloads/...", "workloads", true},
		{"workloads/...", "workloads/spec", true},
		{"workloads/...", "workloadsx", false},
		{"internal/bench*/...", "internal/benchrun", true},
		{"internal/bench*/...", "internal/benchcmp/table", true},
		{"internal/bench*/...", "internal/invariants", false},
		{"cmd/*/...", "cmd", false},
		{"cmd/*/...", "cmd/benchrun", true},
	} {
		if got := match(tc.pattern, tc.rel); got != tc.want {
			t.Errorf("match(%q, %q) = %v, want %v", tc.pattern, tc.rel, got, tc.want)
		}
	}
}

// TestRulesValidation checks that a broken rules table is refused.
func TestRulesValidation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules []rule
		want  string
	}{
		{"duplicate", []rule{{name: "a", patterns: []string{"a"}}, {name: "a", patterns: []string{"b"}}}, "defined twice"},
		{"unknown arrow", []rule{{name: "a", patterns: []string{"a"}, arrows: []string{"b"}}}, "unknown component"},
		{"cycle", []rule{
			{name: "a", patterns: []string{"a"}, arrows: []string{"b"}},
			{name: "b", patterns: []string{"b"}, arrows: []string{"a"}},
		}, "cycle"},
		{"no patterns", []rule{{name: "a"}}, "no patterns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newChecker(tc.rules)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("newChecker = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// graph builds packages from a map of direct imports, computing deps as the
// transitive closure, the way go list reports them.
func graph(imports map[string][]string) []pkg {
	var pkgs []pkg
	for rel, imps := range imports {
		seen := map[string]bool{}
		stack := slices.Clone(imps)
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if !seen[n] {
				seen[n] = true
				stack = append(stack, imports[n]...)
			}
		}
		pkgs = append(pkgs, pkg{rel: rel, name: path.Base(rel), imports: imps, deps: slices.Sorted(maps.Keys(seen))})
	}
	return pkgs
}

// cleanGraph follows every arrow of the rules table.
func cleanGraph() map[string][]string {
	return map[string][]string{
		"internal/invariants": nil,
		"internal/arch":       nil,
		"core/frontier":       {"internal/invariants"},
		"core/batch":          {"core/frontier", "internal/invariants"},
		"core/spine":          {"core/batch"},
		"core/trace":          {"core/spine", "core/frontier"},
		"core/share":          {"core/trace"},
		"core/dataflow":       {"core/share", "core/expr"},
		"core/expr":           nil,
		"core/join":           {"core/dataflow", "core/expr", "core/batch"},
		"core/reduce":         {"core/dataflow", "core/expr"},
		"core/plan":           {"core/expr"},
		"core/render":         {"core/join", "core/reduce", "core/plan"},
		"core/runtime":        {"core/dataflow", "internal/invariants"},
		"core/reference":      {"core/plan"},
		"workloads":           {"core/runtime", "core/render", "core/reference", "workloads/spec"},
		"workloads/spec":      {"core/plan"},
		"internal/benchrun":   {"workloads", "core/frontier"},
		"internal/benchcmp":   nil,
		"cmd/benchrun":        {"internal/benchrun"},
		"cmd/benchcmp":        {"internal/benchcmp"},
	}
}

// TestCheckSynthetic runs the checker on synthetic dependency maps, so that
// the arrows are tested while the module has few packages.
func TestCheckSynthetic(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(g map[string][]string)
		rules func(rs []rule) []rule // nil: rules()
		want  []string               // substrings, one per expected problem
	}{
		{name: "clean"},
		{
			name: "upward import",
			edit: func(g map[string][]string) { g["core/batch"] = append(g["core/batch"], "core/spine") },
			want: []string{"core/batch (batch) imports core/spine (spine): not allowed"},
		},
		{
			name: "leaf imports",
			edit: func(g map[string][]string) { g["core/expr"] = []string{"core/frontier"} },
			want: []string{"core/expr (expr) imports core/frontier (frontier)"},
		},
		{
			name: "sideways between join and reduce",
			edit: func(g map[string][]string) { g["core/join"] = append(g["core/join"], "core/reduce") },
			want: []string{"core/join (join) imports core/reduce (reduce)"},
		},
		{
			name: "plan reads batches",
			edit: func(g map[string][]string) { g["core/plan"] = append(g["core/plan"], "core/batch") },
			want: []string{"core/plan (plan) imports core/batch (batch)"},
		},
		{
			name: "core imports a command",
			edit: func(g map[string][]string) { g["core/frontier"] = []string{"cmd/benchrun"} },
			want: []string{
				"core/frontier depends on cmd/benchrun (via core/frontier -> cmd/benchrun): nothing in core/",
				"core/frontier depends on internal/benchrun (via core/frontier -> cmd/benchrun -> internal/benchrun)",
				"core/frontier depends on workloads (via core/frontier -> cmd/benchrun -> internal/benchrun -> workloads)",
				"core/frontier depends on workloads/spec (via",
				"core/frontier (frontier) imports cmd/benchrun (cmd)",
			},
		},
		{
			name: "core imports workloads under a broken rules table",
			edit: func(g map[string][]string) {
				g["core/metrics"] = []string{"workloads/spec"}
				g["core/metricsreader"] = []string{"core/metrics"}
			},
			rules: func(rs []rule) []rule {
				return append(rs,
					rule{name: "metrics", patterns: []string{"core/metrics"}, arrows: []string{"workloads"}},
					rule{name: "metricsreader", patterns: []string{"core/metricsreader"}, arrows: []string{"metrics"}})
			},
			// Reported once, where the chain leaves core/, not again at
			// core/metricsreader.
			want: []string{"core/metrics depends on workloads/spec (via core/metrics -> workloads/spec): nothing in core/"},
		},
		{
			name: "invariants is a leaf",
			edit: func(g map[string][]string) { g["internal/invariants"] = []string{"core/frontier"} },
			want: []string{"internal/invariants (invariants) imports core/frontier (frontier)"},
		},
		{
			name: "unknown package",
			edit: func(g map[string][]string) { g["core/metrics"] = []string{"core/frontier"} },
			want: []string{"core/metrics: package is not in the arrows rules; add it to rules()"},
		},
		{
			name: "import of an unknown package",
			edit: func(g map[string][]string) {
				g["core/metrics"] = nil
				g["core/batch"] = append(g["core/batch"], "core/metrics")
			},
			// The import is judged once core/metrics is classified.
			want: []string{"core/metrics: package is not in the arrows rules"},
		},
		{
			name: "util package",
			edit: func(g map[string][]string) { g["workloads/util"] = nil },
			want: []string{"workloads/util: package util: the layout allows no util or common package"},
		},
		{
			name: "common package outside the rules",
			edit: func(g map[string][]string) { g["internal/common"] = nil },
			want: []string{
				"internal/common: package common: the layout allows no util",
				"internal/common: package is not in the arrows rules",
			},
		},
		{
			name: "ambiguous patterns",
			rules: func(rs []rule) []rule {
				return append(rs, rule{name: "extra", patterns: []string{"core/*"}})
			},
			want: slices.Repeat([]string{"matches several components"}, 13),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := rules()
			if tc.rules != nil {
				rs = tc.rules(rs)
			}
			c, err := newChecker(rs)
			if err != nil {
				t.Fatal(err)
			}
			g := cleanGraph()
			if tc.edit != nil {
				tc.edit(g)
			}
			got := c.check(graph(g))
			if len(got) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for _, w := range tc.want {
				if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
					t.Errorf("no problem contains %q; got:\n%s", w, strings.Join(got, "\n"))
				}
			}
		})
	}

	t.Run("dependency without its import", func(t *testing.T) {
		c, err := newChecker(rules())
		if err != nil {
			t.Fatal(err)
		}
		pkgs := graph(cleanGraph())
		for i := range pkgs {
			if pkgs[i].rel == "core/plan" {
				pkgs[i].deps = append(pkgs[i].deps, "core/batch")
			}
		}
		got := c.check(pkgs)
		want := "core/plan (plan) depends on core/batch (batch) transitively (via core/plan -> ? -> core/batch)"
		if len(got) != 1 || !strings.Contains(got[0], want) {
			t.Fatalf("got %q, want one problem containing %q", got, want)
		}
	})
}
