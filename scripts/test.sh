#!/usr/bin/env bash
# test.sh runs every check CI runs (.ci/run runs exactly this script).
#
# Steps, in order; all run even if one fails, and the script exits 1 at the
# end if any failed (Ctrl-C, or SIGINT or SIGTERM sent to the script alone,
# stops it with the running step: no later step runs, and it exits 130, or
# 143 for SIGTERM):
#
#   download     go mod download
#   tidy         go mod tidy -diff shows nothing (go.mod and go.sum are tidy)
#   build        go build ./...
#   gofmt        gofmt -l lists no file (testdata excluded)
#   vet          go vet ./...
#   staticcheck  go tool staticcheck ./... (pinned by the tool directive in go.mod)
#   browser-deps scripts/browser-deps.sh: installs Debian's chromium for the
#                browser tests when absent (never fails; the tests skip
#                with a message when no chromium is present)
#   test-race    go test -race -tags invariants -short -count=1 ./...: the
#                race detector over every test at its -short size
#   test-full    go test -tags invariants -count=1 ./...: every test at its
#                full size, with the invariants' assertions (without the
#                race detector, which costs 5-10 times the time; the full
#                sizes under it took over half the script's budget)
#   test-386     GOARCH=386 go test -short -tags invariants -count=1 ./...:
#                a 32-bit build, where int is 32 bits and the portable Go
#                kernels replace the amd64 assembly (as on arm64), with the
#                kernels' assertions on; it says it skipped, and passes,
#                when this machine cannot run 386 binaries
#   check        go run ./cmd/benchrun check: every built-in workload at its
#                check size, both index modes, both joins, W=1 and 2,
#                against the reference evaluator (exit 1 on a difference)
#   bench-baseline scripts/bench-baseline.sh: a short default-suite run
#                (--count 6) compared with results/baseline.txt by benchcmp
#                when the cpu and gomaxprocs lines match the baseline's
#                (else it says it skipped, and why); informational: it
#                fails only on a broken comparison, never on a verdict
#   bench-smoke  every benchmark once, as a test:
#                go test -run '^$' -bench . -benchtime 1x -short ./...
#   fuzz         each fuzz target for a fixed number of executions (its
#                own, sized to 5-10 s here; FUZZ_TIME overrides all):
#                go test -run '^$' -fuzz '^Target$' -fuzztime Nx
#                -fuzzminimizetime 100x PKG
#   mutants      scripts/mutants.sh -short -s MUTANTS_SUBSET (default 3):
#                that many mutants, picked by the commit, each killed every
#                time in 2 runs if concurrent (the whole matrix:
#                scripts/mutants.sh, see the README's "Proving the checks")
#   leftovers    nothing the steps ran is left in their $TMPDIR: every
#                step runs with TMPDIR set to a fresh directory, which
#                must be empty at the end (a test or script that leaves
#                files behind fails here, naming them); it is removed
#                either way
#
# Environment:
#
#   TEST_TIMEOUT  -timeout for each test binary (default 5m). The whole
#                 script is meant to finish within 15 minutes on 2 cores.
#   GOFLAGS       appended after the script's own flags (-mod=readonly
#                 -buildvcs=false), so a caller can add or override.
#
#   FUZZ_TIME       -fuzztime of every fuzz target (default: each target's
#                   own count). A count (Nx), not a duration: Go 1.26's fuzz
#                   coordinator can fail a duration-bound run with "context
#                   deadline exceeded" when its deadline catches a worker
#                   mid-call, with no failing input (go.dev/issue/75804).
#   MUTANTS_SUBSET  mutants per run of the mutants step (default 3; 0: all).
#
# A value of TEST_TIMEOUT, FUZZ_TIME or MUTANTS_SUBSET of the wrong form is
# refused with exit 2, naming it, before any step runs.
#
# Parallelism is Go's default: -p and GOMAXPROCS follow the number of CPUs.
#
# It needs bash 5 or later (its step timer reads EPOCHREALTIME): macOS's
# /bin/bash is 3.2, so there run it with a newer bash first on PATH.
set -euo pipefail
if ((BASH_VERSINFO[0] < 5)); then
	echo "test.sh: needs bash 5 or later, this is bash $BASH_VERSION (on macOS, install a newer bash and put it first on PATH)" >&2
	exit 2
fi
# The module is built alone: a go.work in a parent directory, or GOWORK
# naming another workspace, would make go refuse its packages.
export GOWORK=off

# It takes no arguments (its settings are the environment above): any, such
# as a mistyped -h, would otherwise start every step.
case ${1:-} in
-h | --help)
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
	exit 0
	;;
esac
if (($# > 0)); then
	echo "test.sh: takes no arguments, got $1 (its settings are environment variables; see --help)" >&2
	exit 2
fi

# The repository is the script's, also when it is run through a symbolic
# link (~/bin/tracebench-test).
self=$(readlink -f "${BASH_SOURCE[0]}" 2>/dev/null) || self=${BASH_SOURCE[0]}
cd "$(dirname "$self")/.."

export GOFLAGS="-mod=readonly -buildvcs=false${GOFLAGS:+ $GOFLAGS}"
timeout="${TEST_TIMEOUT:-5m}"

# The settings are checked before any step: a mistyped one failed every
# go test step, the fuzz step or the mutants step (after minutes of the
# others), with exit 1.
bad_setting() {
	echo "test.sh: $1: $2 (see --help)" >&2
	exit 2
}
source scripts/lib.sh # go_duration
go_duration "$timeout" ||
	bad_setting "TEST_TIMEOUT=$timeout" "want a Go duration of at most 2562047h, such as 5m or 90s"
[[ -z ${FUZZ_TIME:-} || $FUZZ_TIME =~ ^[1-9][0-9]*x$ ]] || { [[ $FUZZ_TIME != 0 ]] && go_duration "$FUZZ_TIME"; } ||
	bad_setting "FUZZ_TIME=$FUZZ_TIME" "want a count of executions, such as 100000x, or a Go duration, such as 30s"
[[ ${MUTANTS_SUBSET:-3} =~ ^(0|[1-9][0-9]*)$ ]] ||
	bad_setting "MUTANTS_SUBSET=$MUTANTS_SUBSET" "want a non-negative integer (0: every mutant)"

names=()
results=()
durations=()
failed=()

# now prints the time in seconds with microseconds.
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }

# elapsed prints the seconds since $1, with one decimal.
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Ctrl-C (SIGINT to the process group), and SIGINT or SIGTERM sent to the
# script alone (kill PID, a CI runner cancelling the job), stop the script
# with the step it runs. go catches SIGINT and exits 1 rather than dying
# of the signal: bash took the step for one that failed and went on to the
# next, so that a Ctrl-C only cut one step short. And a signal to the
# script alone never reached the step: bash died of SIGTERM at once,
# leaving the step's go running with no one waiting for it, and held
# SIGINT until the step had ended. Each step now runs in a process group
# of its own (run_in_group, scripts/lib.sh), which the script waits for:
# a trapped signal ends that wait, and the trap passes the signal on to
# the step's whole group (go and the test binaries it runs), waits for it
# to end, and exits 130 (SIGINT) or 143 (SIGTERM). The EXIT trap below
# removes the scratch directory.
current="(none yet)"
child="" # the process group of the running step
interrupted() {
	trap - INT TERM
	if [[ -n $child ]]; then
		kill -"$1" -- -"$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	echo
	echo "test.sh: interrupted during step $current by SIG$1; the remaining steps do not run" >&2
	exit "$2"
}
trap 'interrupted INT 130' INT
trap 'interrupted TERM 143' TERM

# step NAME COMMAND... runs one step and records its result without stopping
# the script.
#
# NB: errexit is off inside a command whose status is tested (bash ignores -e
# there, even if set again), so a function used as a step must check each
# command itself.
step() {
	local name=$1
	shift
	current=$name
	echo
	echo "== step: $name"
	printf '+'
	printf ' %q' "$@"
	printf '\n'
	local start rc=0
	start=$(now)
	run_in_group "$@" || rc=$?
	local took
	took=$(elapsed "$start")
	names+=("$name")
	durations+=("$took")
	if ((rc == 0)); then
		results+=("ok")
		echo "== step: $name (${took}s)"
	else
		results+=("FAIL (exit $rc)")
		failed+=("$name")
		echo "== step: $name (${took}s) FAILED with exit status $rc"
	fi
}

# gofmt_check fails if gofmt would change a Go file outside testdata.
gofmt_check() {
	local files
	files=$(find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*' -print0 |
		xargs -0 -r gofmt -l) || return 1
	if [[ -n $files ]]; then
		echo "gofmt would change these files (run gofmt -w on them):"
		echo "$files"
		return 1
	fi
}

# fuzz runs every fuzz target of the module for its count of executions
# (TARGET:COUNT, sized to 5-10 s each on the 2-core CI machine); a crash fails
# the step and leaves the input in the package's testdata/fuzz, to be
# committed as a regression seed. Minimizing a new input is bounded by count
# too, so a slow target cannot stall the step for -fuzzminimizetime's
# default minute.
fuzz_targets=(
	core/expr:FuzzEval:40000
	core/expr:FuzzChainsAgreeWithGoParser:60000
	core/share:FuzzShareMachine:15000
	workloads/spec:FuzzDecode:40000
	workloads/spec:FuzzReadCSV:30000
	internal/benchcmp:FuzzReadResults:2500
	core/spine:FuzzSpineMachine:40000
)
fuzz() {
	local rc=0 t pkg target count
	for t in "${fuzz_targets[@]}"; do
		IFS=: read -r pkg target count <<<"$t"
		echo "-- $pkg $target"
		go test -run '^$' -fuzz "^$target\$" -fuzztime "${FUZZ_TIME:-${count}x}" \
			-fuzzminimizetime 100x -timeout "$timeout" "./$pkg" || rc=1
	done
	return $rc
}

# test_386 runs the short tests built for GOARCH=386: int is 32 bits there,
# and core/batch's portable kernels (*_other.go) run instead of the amd64
# assembly, as on every other architecture. An amd64 kernel without 32-bit
# support cannot run them: a probe binary tells, and the step then says it
# skipped rather than failing the run.
test_386() {
	local probe
	probe=$(mktemp -d) || return 1
	if ! GOARCH=386 go test -c -o "$probe/probe.test" ./internal/invariants; then
		rm -rf "$probe"
		return 1
	fi
	if ! "$probe/probe.test" -test.run '^$' >/dev/null 2>&1; then
		rm -rf "$probe"
		echo "test-386: skipped: this machine cannot run GOARCH=386 binaries"
		return 0
	fi
	rm -rf "$probe"
	GOARCH=386 go test -short -tags invariants -count=1 -timeout "$timeout" ./...
}

# Every step's temporary files go under one fresh directory, checked by the
# leftovers step and removed on exit.
scratch=$(mktemp -d) || {
	echo "test.sh: mktemp failed" >&2
	exit 1
}
trap 'rm -rf "$scratch"' EXIT
# Searchable by every user, as /tmp is (mktemp -d makes it 0700): a test
# run as root that runs a process as another user in a directory of its
# own (TestOutputsInAStickyDirectory runs benchrun as nobody) failed here,
# that user unable to reach it. What the steps make in it is their own.
chmod 0755 "$scratch" || {
	echo "test.sh: chmod $scratch failed" >&2
	exit 1
}
export TMPDIR=$scratch

# leftovers fails if a step left anything in $TMPDIR, and names it.
leftovers() {
	local left
	left=$(cd "$scratch" && ls -A | sort) || return 1
	if [[ -n $left ]]; then
		echo "the steps left these in \$TMPDIR ($scratch); a test or script does not clean up:"
		echo "$left"
		find "$scratch" -mindepth 1 -maxdepth 3 | head -n 40
		return 1
	fi
}

total_start=$(now)
go version
echo "GOFLAGS=$GOFLAGS TEST_TIMEOUT=$timeout CPUs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?')"

step download go mod download
step tidy go mod tidy -diff
step build go build ./...
step gofmt gofmt_check
step vet go vet ./...
step staticcheck go tool staticcheck ./...
step browser-deps scripts/browser-deps.sh
step test-race go test -race -tags invariants -short -count=1 -timeout "$timeout" ./...
step test-full go test -tags invariants -count=1 -timeout "$timeout" ./...
step test-386 test_386
step check go run ./cmd/benchrun check
step bench-baseline scripts/bench-baseline.sh
step bench-smoke go test -run '^$' -bench . -benchtime 1x -short -timeout "$timeout" ./...
step fuzz fuzz
step mutants scripts/mutants.sh -short -n 2 -s "${MUTANTS_SUBSET:-3}" -t "$timeout"
step leftovers leftovers

echo
echo "== summary"
for i in "${!names[@]}"; do
	printf '  %-14s %8ss  %s\n' "${names[$i]}" "${durations[$i]}" "${results[$i]}"
done
printf '  %-14s %8ss\n' total "$(elapsed "$total_start")"
if ((${#failed[@]} > 0)); then
	echo "FAILED: ${failed[*]}"
	exit 1
fi
echo "all steps passed"
