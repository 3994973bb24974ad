package mutants

// Name names one mutant of the catalogue.
type Name string

// The catalogue's names, numbered as the README's table of mutants lists them.
const (
	DeltaJoinErrorsPerPath     Name = "delta-join-errors-per-path"      // 1
	ImportKeepsNoHold          Name = "import-keeps-no-hold"            // 2
	PublishReservesNoPeerHold  Name = "publish-reserves-no-peer-hold"   // 3
	DeltaJoinLessEqualAllPaths Name = "delta-join-less-equal-all-paths" // 4
	DeltaLookupAtOutstanding   Name = "delta-lookup-at-outstanding"     // 5
	MergeSinceMeet             Name = "merge-since-meet"                // 6
	ReaderNoPhysicalSeedHold   Name = "reader-no-physical-seed-hold"    // 7
	JoinSkipsCoveredBatch      Name = "join-skips-covered-batch"        // 8
	ReduceIgnoresNegative      Name = "reduce-ignores-negative"         // 9
	ApplySinceBeforePublish    Name = "apply-since-before-publish"      // 10
	AdmissionTwoSections       Name = "admission-two-sections"          // 11
	SeedQueueSeparateLocks     Name = "seed-queue-separate-locks"       // 12
	DowngradeNoWake            Name = "downgrade-no-wake"               // 13
	PeerBundleAtZero           Name = "peer-bundle-at-zero"             // 14
	DiffArithmeticWraps        Name = "diff-arithmetic-wraps"           // 15
	StaleDropReleasesNewHold   Name = "stale-drop-releases-new-hold"    // 16
	FailedStepFreezesNothing   Name = "failed-step-freezes-nothing"     // 17
	LentWakeNeverPauses        Name = "lent-wake-never-pauses"          // 18
	SaturatedMarkEachStep      Name = "saturated-mark-each-step"        // 19
)

// Mutant is one entry of the catalogue.
type Mutant struct {
	Name Name
	// Issue is the mutant's number, the # column of the README's table of
	// mutants.
	Issue int
	// Package is the package holding the mutant's one site.
	Package string
	// Does says what the mutant does, as a bug report would.
	Does string
	// Concurrent marks a mutant whose effect depends on an interleaving:
	// scripts/mutants.sh runs it repeatedly and it must be killed every
	// time.
	Concurrent bool
}

// Catalogue returns every mutant, in issue order. The slice is fresh on each
// call.
func Catalogue() []Mutant {
	return []Mutant{
		{DeltaJoinErrorsPerPath, 1, "core/join", "a delta join re-emits each input's errors in every path, not once per input", false},
		{ImportKeepsNoHold, 2, "core/share", "an import registers no read hold of its own: only the consumer's hold protects what it has not replayed", false},
		{PublishReservesNoPeerHold, 3, "core/share", "publishing reserves no peer hold: the peer registers its hold only when it renders", true},
		{DeltaJoinLessEqualAllPaths, 4, "core/join", "every delta path compares times with <=, so simultaneous updates of two inputs are joined twice", false},
		{DeltaLookupAtOutstanding, 5, "core/join", "delta join lookups compact their traces to the least outstanding time instead of one before it", false},
		{MergeSinceMeet, 6, "core/batch", "a merged batch's since is the meet of its inputs' sinces instead of their join", false},
		{ReaderNoPhysicalSeedHold, 7, "core/share", "a reader does not hold the boundary it was seeded at physically: the publisher may merge a batch across it", false},
		{JoinSkipsCoveredBatch, 8, "core/join", "a join skips a stream batch when the trace it reads has already moved past it, as after a merge (differential-dataflow #801)", false},
		{ReduceIgnoresNegative, 9, "core/reduce", "a reduce ignores negative multiplicities instead of reporting them", false},
		{ApplySinceBeforePublish, 10, "core/share", "the publisher applies a new since to its spine before publishing it to its points", true},
		{AdmissionTwoSections, 11, "core/share", "reader admission checks the since and registers the hold in two critical sections", true},
		{SeedQueueSeparateLocks, 12, "core/share", "an importer's seed and its replay queue are registered under separate locks", true},
		{DowngradeNoWake, 13, "core/share", "a reader's downgrade does not wake the publisher", true},
		{PeerBundleAtZero, 14, "core/share", "a peer bundle holds at {0} instead of the dataflow's as_of", false},
		{DiffArithmeticWraps, 15, "core/batch", "consolidating diffs wraps around int64 instead of reporting numeric overflow", false},
		{StaleDropReleasesNewHold, 16, "core/share", "a stale create of an old index incarnation takes the newest incarnation's peer hold, so its stale drop releases it", true},
		{FailedStepFreezesNothing, 17, "core/dataflow", "an operator that failed its step holds its output but ends no wait downstream of it: a probe's wait for a time it will never pass lasts until its context", false},
		{LentWakeNeverPauses, 18, "core/runtime", "a Maintenance worker that ran a reader's wake past its budget goes on running every wake of that reader: a slow query holds up maintenance every round", false},
		{SaturatedMarkEachStep, 19, "core/reduce", "a reduce adds numeric overflow at every step that reads a batch a merge saturated, not once: one record out of int64 grows the error's count with every round", false},
	}
}

// Known reports whether n is in the catalogue.
func Known(n Name) bool {
	for _, m := range Catalogue() {
		if m.Name == n {
			return true
		}
	}
	return false
}
