//go:build !mutants

package mutants

// Enabled reports whether this is a mutant build (build tag mutants).
const Enabled = false

// On reports whether mutant n is on. Without the mutants tag it is always
// false; call it only behind Enabled (see the package documentation).
func On(n Name) bool { return false }
