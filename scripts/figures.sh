#!/usr/bin/env bash
# figures.sh runs, in one go, every benchmark behind README.md's Figures
# table, so that each ratio there comes from one run on one host. Each step
# writes Go benchmark format (readable by benchcmp and benchstat) to
# OUTDIR/STEP.txt, and the script prints each step's duration. It fails if
# a step fails; it never judges a figure (the machines are shared and
# noisy: read the ratios, which pair each op with its limit in one run).
#
# Usage:
#
#   scripts/figures.sh [OUTDIR]     (default: figures-YYYYMMDD-HHMMSS)
#   scripts/figures.sh -h | --help  this text
#
# OUTDIR is relative to where the script runs (it may be run from any
# directory, or through a symbolic link); it must be new or empty. A flag
# other than -h, an empty OUTDIR, - or a second argument is bad usage
# (exit 2).
#
# SIGINT (Ctrl-C) or SIGTERM, to the script or its process group, stops
# the running step and the script, which exits 130 or 143, naming the
# signal, and leaves nothing half-written: it removes its temporary
# directory of test binaries and the OUTDIR it made (with the parents it
# made for it), or empties again an OUTDIR that was there, empty.
#
# About 5 to 20 minutes on a 2-vCPU host. Run it with nothing else of yours
# running: the benchmarks measure elapsed time.
#
# Steps (test binaries are built first, so no step times a compile):
#
#   batch        core/batch: Build, Merge, MergeN, RadixLimit, SortLimit,
#                MergeLimit, Tally (20 ops, 6 samples) and Seal
#   spine        core/spine: SpineSteady (the spine alone)
#   install      core/runtime: Install (arrange with ingest, import)
#   steady       core/runtime: Steady round=1, 1,000 and 100,000
#   steady-p1    core/runtime: Steady round=1,000 direct with GOMAXPROCS=1
#   ratio        core/runtime: SteadyRatio round=1 and 1,000 (interleaved)
#   ratio-p1     the same with GOMAXPROCS=1
#   workers      core/runtime: SteadyWorkers round=1,000 and 100,000
#   handoff      core/runtime: Handoff at -cpu 1,2
#   firsttouch   core/runtime: FirstTouch (a fresh page's price)
#   reduce       core/reduce: Reduce count and its Go map limit at 1M
#   share        core/share: Readers, ImportInstall
#   exchange     core/dataflow: Share (and its Go path), Route, interleaved
#   dd           benchrun run dd --param rows=1e6 (both index modes)
set -euo pipefail
# The module is built alone: a go.work in a parent directory, or GOWORK
# naming another workspace, would make go refuse its packages.
export GOWORK=off

# The repository is the script's, also when it is run through a symbolic
# link.
self=$(readlink -f "${BASH_SOURCE[0]}" 2>/dev/null) || self=${BASH_SOURCE[0]}
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$self"; }
bad() {
	echo "figures.sh: $* (see --help)" >&2
	exit 2
}
# Its arguments are checked before anything is made: --help was taken for
# OUTDIR (mkdir printed its own help and the build step failed writing
# --help/build.txt), -h failed in mkdir with exit 1, and a second
# argument was dropped.
case ${1:-} in
-h | --help)
	usage
	exit 0
	;;
-?*) bad "unknown flag $1; the one argument is OUTDIR" ;;
esac
(($# <= 1)) || bad "takes one argument, OUTDIR; got $#: $*"
(($# == 0)) || [[ -n $1 ]] || bad "OUTDIR is empty"
# - names no standard output here, as for benchrun's outputs and gen's
# --out: taken as a directory it ran every step into ./-.
[[ ${1:-} != - ]] || bad "OUTDIR -: - names no directory (a directory named -: ./-)"
out=${1:-figures-$(date +%Y%m%d-%H%M%S)}
# OUTDIR is where the caller means it, not under the repository root the
# script moves to.
[[ $out == /* ]] || out=$PWD/$out
[[ ! -e $out || -d $out ]] || bad "OUTDIR $out exists and is not a directory"
[[ ! -d $out || -z $(ls -A "$out" 2>/dev/null) ]] || bad "OUTDIR $out exists and is not empty; give a new or empty one"
cd "$(dirname "$self")/.."
source scripts/lib.sh # run_in_group
# What an interrupted run removes: the directories mkdir -p makes (top,
# the first of OUTDIR's that does not exist yet, and all under it), or,
# when OUTDIR was there (empty), what the run wrote into it.
top=""
if [[ ! -d $out ]]; then
	top=$out
	while [[ ! -e $(dirname "$top") ]]; do top=$(dirname "$top"); done
fi
bin=""
trap 'rm -rf "$bin"' EXIT
# SIGINT (Ctrl-C) or SIGTERM, to the script or its process group, stops
# the script with the step it runs, and removes what the run wrote.
# Ctrl-C left OUTDIR half-written (a partial step file, and a rerun with
# the same OUTDIR refused it as not empty), SIGINT to the script alone
# was held until the step had ended, and SIGTERM to the script alone
# killed bash at once, leaving the step's test binary running, still
# writing into OUTDIR. Each step runs in a process group of its own
# (run_in_group, scripts/lib.sh), which the script waits for: a trapped
# signal ends that wait, and the trap passes the signal on to the step's
# group, waits for it, removes what the run wrote and exits 130 (SIGINT)
# or 143 (SIGTERM); the EXIT trap removes the test binaries.
child=""   # the process group of the running step
running="" # its name
interrupted() {
	trap - INT TERM
	if [[ -n $child ]]; then
		kill -"$1" -- -"$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	local what
	if [[ -n $top ]]; then
		rm -rf "$top"
		what="removed $top"
	else
		find "$out" -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null || true
		what="$out left empty, as it was"
	fi
	echo "figures.sh: interrupted by SIG$1${running:+ during step $running}; $what" >&2
	exit "$2"
}
trap 'interrupted INT 130' INT
trap 'interrupted TERM 143' TERM
mkdir -p "$out"
bin=$(mktemp -d)


step() {
	local name=$1
	shift
	local start=$SECONDS rc=0
	echo "== $name"
	running=$name
	run_in_group -o "$out/$name.txt" "$@" || rc=$?
	running=""
	if ((rc != 0)); then
		echo "figures.sh: step $name failed; its output is in $out/$name.txt" >&2
		tail -20 "$out/$name.txt" >&2
		exit 1
	fi
	echo "   $name: $((SECONDS - start)) s"
}

# The steps of more than one command are functions, not sh -c strings: a
# $TMPDIR with a space in it split the binaries' paths there.
build() {
	go test -c -o "$bin/batch.test" ./core/batch &&
		go test -c -o "$bin/spine.test" ./core/spine &&
		go test -c -o "$bin/runtime.test" ./core/runtime &&
		go test -c -o "$bin/reduce.test" ./core/reduce &&
		go test -c -o "$bin/share.test" ./core/share &&
		go test -c -o "$bin/dataflow.test" ./core/dataflow &&
		go build -o "$bin/benchrun" ./cmd/benchrun
}
step build build

b() { # b BINARY ARGS...: a benchmark run of a test binary, no tests
	local t=$1
	shift
	"$bin/$t" -test.run '^$' "$@"
}

batch() {
	b batch.test -test.bench '^BenchmarkBuild$|^BenchmarkMerge$|^BenchmarkMergeN$|^BenchmarkRadixLimit$|^BenchmarkSortLimit$|^BenchmarkMergeLimit$|^BenchmarkTally$' -test.benchtime 20x -test.count 6 &&
		b batch.test -test.bench '^BenchmarkSeal$' -test.benchtime 20000x -test.count 6
}
step batch batch
step spine b spine.test -test.bench '^BenchmarkSpineSteady$' -test.benchtime 4000x -test.count 6
step install b runtime.test -test.bench '^BenchmarkInstall$' -test.benchtime 10x -test.count 6
steady() {
	b runtime.test -test.bench '^BenchmarkSteady$/^round=1$/' -test.benchtime 5000x -test.count 3 &&
		b runtime.test -test.bench '^BenchmarkSteady$/^round=1000$/' -test.benchtime 2000x -test.count 3 &&
		b runtime.test -test.bench '^BenchmarkSteady$/^round=100000$/' -test.benchtime 20x -test.count 3
}
step steady steady
step steady-p1 env GOMAXPROCS=1 "$bin/runtime.test" -test.run '^$' -test.bench '^BenchmarkSteady$/^round=1000$/^index=direct$' -test.benchtime 2000x -test.count 3
ratio() {
	b runtime.test -test.bench '^BenchmarkSteadyRatio$/^round=1$' -test.benchtime 10000x -test.count 3 &&
		b runtime.test -test.bench '^BenchmarkSteadyRatio$/^round=1000$' -test.benchtime 3000x -test.count 3
}
step ratio ratio
step ratio-p1 env GOMAXPROCS=1 "$bin/runtime.test" -test.run '^$' -test.bench '^BenchmarkSteadyRatio$/^round=(1|1000)$' -test.benchtime 3000x -test.count 2
step workers b runtime.test -test.bench '^BenchmarkSteadyWorkers$/^round=(1000|100000)$/' -test.benchtime 20x -test.count 6
step handoff b runtime.test -test.bench '^BenchmarkHandoff$' -test.benchtime 5000x -test.count 3 -test.cpu 1,2
step firsttouch b runtime.test -test.bench '^BenchmarkFirstTouch$' -test.benchtime 200x -test.count 3
step reduce b reduce.test -test.bench '^BenchmarkReduce$/^fn=count$/^n=1000000$|^BenchmarkAggregateLimit$/^fn=count$/^n=1000000$' -test.benchtime 5x -test.count 6
step share b share.test -test.bench 'Readers|ImportInstall' -test.count 6
# One sample of each in turn, six times: the assembly share and its Go
# path are read against each other, and a block of one benchmark's samples
# before the other's gave the first the process's first touches of memory.
exchange() {
	local i
	for i in 1 2 3 4 5 6; do
		b dataflow.test -test.bench '^BenchmarkShare$|^BenchmarkShareInGo$|^BenchmarkRoute$' -test.benchtime 2000x -test.count 1 || return 1
	done
}
step exchange exchange
step dd "$bin/benchrun" run dd --param rows=1e6 --index imported,direct --count 6 --progress off
echo "figures.sh: results in $out/"
