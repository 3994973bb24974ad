// Package docs holds no code. It exists to hold the tests that keep the
// repository's documentation honest: every citation of the semantics points
// at something docs/semantics.md defines, and every citation of the spec
// documentation at a heading docs/spec.md has.
//
// docs/semantics.md is numbered: top-level sections "## N. Title",
// subsections "### N.M Title" (the worked examples "### 9.A Title"), the
// invariants of §8 as a numbered list "K. **Name.** …", and the protocol
// invariants of §4.6 in bold ("**I1b**"). The tests scan every .md file of
// the repository and the comments of every .go file (directories whose names
// start with a dot are skipped) for citations:
//
//   - "§N", "§N.M", "§9.A" and ranges "§N.M–§N.K" (both ends are checked);
//     "§8.14" names invariant 14 of §8. A "§" that follows "SPEC" or "spec.md"
//     is no citation of the semantics (C5 refuses it).
//   - "invariant K", "invariants K, L and M", "invariants K–L": invariants of
//     §8.
//   - "I1", "I1b", …: the protocol invariants of §4.6.
//   - "[14]", in a file that says its bracketed numbers are from §8
//     ("numbers from §8 in brackets"): invariants of §8.
//
// Checks:
//
//	C1  The document is well formed: sections numbered 0, 1, 2, … in order,
//	    subsections N.1, N.2, … (or N.A, N.B, …) under their section, no
//	    subsection under §8, invariants numbered 1, 2, … in order.
//	C2  It keeps the numbering every citation relies on: the sections,
//	    subsections, invariants and protocol invariants listed in the test.
//	C3  Every citation names a section, subsection or invariant that exists;
//	    a failure names file:line and the citation.
//	C4  No file cites the document by its old location outside the
//	    repository (a separate subtest, so it can be read on its own).
//	C5  docs/spec.md has no numbered sections: it is cited by its headings
//	    in quotes, `docs/spec.md "Fields"` or `(docs/spec.md, "Fields" to
//	    "Expressions")`. Every heading so cited exists (a cited text that
//	    begins a heading up to a space will do: "benchrun eval"), and no
//	    file cites it by a section number.
//	C6  Every test, fuzz target and example a document or a comment names
//	    (Test*, Fuzz*, Example*) is a function of the repository, and so
//	    is every benchmark a document names in backquotes, but for
//	    benchrun's result names (BenchmarkLookup) and the histories, which
//	    keep a benchmark's name as it was when measured: a renamed or
//	    removed test leaves no claim behind it.
package docs
