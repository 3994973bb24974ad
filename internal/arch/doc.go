// Package arch holds no code. It exists to hold arch_test.go, the test that
// enforces the import arrows (README.md, "Layout") on every package
// of the module.
//
// The test lists the module's packages with `go list -deps`-style output
// (.ImportPath, .Name, .Imports, .Deps), once without build tags and once with
// the invariants tag, and checks:
//
//	A1  Every package belongs to exactly one component of the rules table
//	    (rules in arch_test.go). A new package fails the test until it is
//	    added there, and to README.md's Layout if it is a new component.
//	A2  A package depends, directly or transitively, only on packages of its
//	    own component, of the components its arrows reach (the transitive
//	    closure of the arrows), and on the components the table marks open,
//	    which every package may import: internal/invariants, internal/isnil,
//	    internal/mutants and the test harnesses internal/scripttest,
//	    internal/labelstest and internal/guardtest.
//	A3  Nothing in core/ depends on workloads/, internal/bench* or cmd/, even
//	    if the rules table were edited to allow it.
//	A4  No package is named util, utils or common.
//
// Only the imports of non-test files are checked: a test may reach across
// the arrows (an oracle test of core/join may use core/reference), as long as
// Go accepts the import graph.
package arch
