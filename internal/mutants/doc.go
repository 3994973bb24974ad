// Package mutants is the catalogue of deliberate bugs that tracebench's own
// tests and `benchrun check` must catch: each mutant is a small realistic
// bug, named, described by what it does, and switched at exactly one place
// in the code.
//
// A mutant build is any build with the mutants tag. In it, the environment
// variable TRACEBENCH_MUTANT, read once when the program starts, names the
// one mutant that is on (empty: none). A site reads
//
//	if mutants.Enabled && mutants.On(mutants.ImportKeepsNoHold) {
//		// the bug
//	}
//
// Enabled is a constant, false in every other build, so there the condition
// is constant false and the compiler drops the block and the call: a normal
// build has no mutant switch (a test checks a built binary's symbol table),
// and a site does not change the normal build's code path.
//
// scripts/mutants.sh runs the test suite under each mutant and prints the
// kill matrix: which tests caught which mutant, and how often when a mutant
// is run repeatedly.
//
// Invariants:
//
//	M1  Without the mutants tag, Enabled is false and the binary holds no
//	    reference to On nor to TRACEBENCH_MUTANT.
//	M2  Every name a site passes to On is in Catalogue; On panics on a name
//	    that is not (a typo would otherwise be a mutant that never runs).
//	M3  TRACEBENCH_MUTANT names a catalogued mutant or is empty; a mutant
//	    build panics at its first On otherwise.
//	M4  Each mutant is switched at one place (a test counts the sites).
//
// This package imports nothing of the module, so every package may import it.
package mutants
