// Package reference is the naive evaluator of a plan at a time: the oracle
// that tests and `benchrun check` compare the engine with.
//
// Eval accumulates every input at t (the updates with time <= t, exact
// counts), evaluates the views in the plan's order and then the query,
// literally as docs/spec.md ("The query", "Expressions") states it: joins by
// nested loops (each entry hashed by the columns it shares with earlier
// entries), the closure per joined row (maps, filters, project), reduce in
// the order of its errors, distinct, threshold; errors per collection, each
// entry's errors once per entry, consolidated by message. Eval answers from
// the plan's as_of to before its until, where the query's output does
// (docs/spec.md "Fields"): another t is ErrTime. EvalCollection answers at
// any t, as an index does.
//
// Independence: expressions are parsed with go/parser (beyond its
// nesting bound, by cutting the tokens at operators and peeling unary
// operators and parentheses, parseLong) and evaluated on math/big over
// the go/ast tree (expr.go), without core/expr, so that an
// expression bug cannot hide in both; counts are math/big too. From
// core/plan it takes the checked plan: names, columns, the joined layout
// and the classes, not the arrangement choice.
//
// Invariants:
//
//	O1  Every count is exact: the output at t contains a count only if it
//	    fits in int64; the product of counts of a joined row the query
//	    keeps whose rows each had a single update, an accumulation or
//	    total outside int64 sets Result.Overflow, and then the output
//	    holds a numeric overflow error (docs/spec.md "Expressions": the rest
//	    is unspecified).
//	O2  Rows sort numerically column by column, errors by message; no count
//	    is zero.
//	O3  The errors of a query are: each from entry's collection's errors
//	    once per entry, the errors of its closure with the joined row's
//	    count, and its reduce and distinct errors.
//	O4  Result.MayOverflow is set when a mass leaves int64: the mass of a
//	    row or error of a collection at t bounds every sum or product of
//	    counts an incremental engine can form for it, in any order of
//	    consolidation — an input row's is the sum of its updates' absolute
//	    diffs up to t (rows whose count is zero at t included), a joined
//	    row's the product of its rows', a closure's output row's the sum of
//	    the joined rows' reaching it, a reduce or distinct row's twice the
//	    number of input times (its count 1 changes at most once each way a
//	    time); every input row, every join prefix (of from, and of each
//	    delta path's lookup order, whose partial rows a later entry may
//	    never match: a path's rows, partial and full, are those its
//	    lookup keys match, the other equalities of the classes left to
//	    its final closure) and every collection's rows and errors are checked,
//	    read by the query or not. A reduce
//	    view's rows of earlier times, gone since, keep their mass (the
//	    views are evaluated at each earlier input time to find them), so
//	    masses only grow with t and MayOverflow holds from the first time
//	    it is set on, as an overflow error stays in an engine's output.
//	    Compare then accepts the exact output or one holding a numeric
//	    overflow error, with the same columns (docs/spec.md
//	    "Expressions").
//
// Eval is a pure function of its arguments and safe for concurrent use.
package reference
