package benchcmp

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/tracebench/tracebench/workloads/spec"
)

// Merge writes the results of every file in paths, in order, as one result
// file on out: the join of the outputs of `benchrun run --shard i/n`. File
// configuration lines are written where they change and every unit metadata
// line once. Two files giving one unit metadata key different values is an
// error naming both places; so is a syntax error in any file, a line the
// input checks refuse (a cut last line, a garbled unit, an iteration count
// below 1), or a file with no results (ErrInput). Nothing is written then.
// A benchmark (name and configuration but commit, cpu and go) found in more
// than one file is reported on errOut, since shards of one run are
// disjoint; so is one file
// given twice, under any spelling of its path (s0.txt, ./s0.txt, a link).
// A file holding go test's FAIL lines (a shard whose run failed) is not
// passed over: its FAIL lines are written where they were among its
// results, so that the merged file still says that a run failed (a gate on
// it fails), and, the whole output written, Merge returns an error wrapping
// ErrRunFailed (exit 1) naming the first of them; a file of FAIL lines and
// no result (a run that failed before its first) is such a shard, not bad
// input.
// A failed write is an error wrapping ErrOutput.
func Merge(out, errOut io.Writer, paths []string) error {
	if len(paths) == 0 {
		return fmt.Errorf("%w: merge needs at least one file", ErrUsage)
	}
	check, err := newInputCheck(paths)
	if err != nil {
		return err
	}
	same := sameFiles(errOut, paths)
	failures := check.failures()
	warnFailures(errOut, "benchcmp merge", failures)
	// The whole output is built first, so that bad input leaves nothing
	// half-written on out.
	var buf bytes.Buffer
	w := benchfmt.NewWriter(&buf)
	type place struct {
		file string
		line int
		meta *benchfmt.UnitMetadata
	}
	metas := map[benchfmt.UnitMetadataKey]place{}
	firstArg := map[string]int{} // benchmark identity -> the path it was first seen in, by index
	overlaps := map[string]bool{}
	total := 0 // results in every file
	for i, path := range paths {
		f, err := check.open(path)
		if err != nil {
			return openErr(path, err)
		}
		r := benchfmt.NewReader(skipBOM(f), path)
		n, units := 0, 0
		// fails are the file's FAIL lines not yet written: each goes
		// before the first record after it. benchfmt's writer writes
		// each record through to buf, so a line written between two
		// records stays between them.
		fails := check.ends[path].fails
		failsBefore := func(line int) {
			for len(fails) > 0 && fails[0].line < line {
				buf.WriteString(fails[0].raw + "\n")
				fails = fails[1:]
			}
		}
		for r.Scan() {
			_, line := r.Result().Pos()
			failsBefore(line)
			switch rec := r.Result().(type) {
			case *benchfmt.SyntaxError:
				f.Close()
				return check.syntax(rec, r.Units())
			case *benchfmt.UnitMetadata:
				units++
				check.meta(rec)
				file, line := rec.Pos()
				if err := badUnitValue(file, line, rec.OrigUnit, rec.Key, rec.Value); err != nil {
					f.Close()
					return err
				}
				if prev, ok := metas[rec.UnitMetadataKey]; ok {
					if prev.meta.Value != rec.Value {
						f.Close()
						return fmt.Errorf("%w: %s:%d: Unit %s %s=%s conflicts with %s=%s at %s:%d",
							ErrInput, spec.Path(file), line, show(rec.OrigUnit), show(rec.Key), show(rec.Value), show(prev.meta.Key), show(prev.meta.Value), spec.Path(prev.file), prev.line)
					}
					continue
				}
				m := *rec
				metas[rec.UnitMetadataKey] = place{file, line, &m}
				if err := w.Write(&m); err != nil {
					f.Close()
					return fmt.Errorf("%w: %v", ErrOutput, err)
				}
			case *benchfmt.Result:
				tidyZeros(rec) // written as read: the value and unit as written are kept
				if err := check.result(rec); err != nil {
					f.Close()
					return err
				}
				n++
				id := identity(rec)
				if first, ok := firstArg[id]; !ok {
					firstArg[id] = i
				} else if same[first] != same[i] && !overlaps[id] {
					overlaps[id] = true
					fmt.Fprintf(errOut, "benchcmp merge: %s is in both %s and %s (overlapping shards?)\n", messageName(show(string(rec.Name.Full()))), spec.Path(paths[first]), spec.Path(path))
				}
				if err := w.Write(rec); err != nil {
					f.Close()
					return fmt.Errorf("%w: %v", ErrOutput, err)
				}
			}
		}
		err = r.Err()
		f.Close()
		if err != nil {
			return fmt.Errorf("%w: %s: %s", ErrInput, spec.Path(path), spec.PathErr(err))
		}
		failsBefore(math.MaxInt)
		total += n
		switch {
		case n == 0 && units == 0 && len(check.ends[path].fails) > 0:
			// A run that failed before its first result (a build
			// that failed, a panic): its FAIL lines are its part,
			// and the merge fails below naming them.
			fmt.Fprintf(errOut, "benchcmp merge: %s: no benchmark results, FAIL lines only (a run that failed)\n", spec.Path(path))
		case n == 0 && units == 0:
			return fmt.Errorf("%w: %s: no benchmark results (lines starting with Benchmark)", ErrInput, spec.Path(path))
		case n == 0:
			// A shard that drew no benchmark (benchrun run --shard i/n
			// with n above the number of benchmarks) writes its Unit
			// lines alone: merged as the empty part it is.
			fmt.Fprintf(errOut, "benchcmp merge: %s: no benchmark results, Unit lines only (an empty shard)\n", spec.Path(path))
		}
	}
	if total == 0 && len(failures) == 0 {
		return fmt.Errorf("%w: no benchmark results in any file", ErrInput)
	}
	if err := check.finish(); err != nil {
		return err
	}
	if _, err := out.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("%w: %v", ErrOutput, err)
	}
	if len(failures) > 0 {
		return fmt.Errorf("%w: go test says so at %s; the merged results, written with the FAIL lines, are missing or partial",
			ErrRunFailed, listSome(failures, 1))
	}
	return nil
}

// sameFiles reports on errOut every path of paths that names the same file
// as an earlier one (os.SameFile: the same path, another spelling of it, or
// a link), whose samples Merge writes twice. It returns, for each path, the
// index of the first path naming its file, so that Merge does not report
// each benchmark of such a file as an overlap too.
func sameFiles(errOut io.Writer, paths []string) []int {
	first := make([]int, len(paths))
	infos := make([]os.FileInfo, len(paths))
	for i, p := range paths {
		first[i] = i
		infos[i], _ = os.Stat(p) // Merge reports an unreadable file itself
		if infos[i] == nil {
			continue
		}
		for j := range i {
			if infos[j] != nil && os.SameFile(infos[j], infos[i]) {
				first[i] = first[j]
				fmt.Fprintf(errOut, "benchcmp merge: %s and %s are the same file: its samples are written twice\n", spec.Path(paths[j]), spec.Path(p))
				break
			}
		}
	}
	return first
}

// identity names a benchmark by its full name and file configuration, less
// the keys a comparison ignores (ignoredConfig: commit, cpu and go), so that
// two shards holding one benchmark run on different hosts or commits are
// overlapping shards too: a comparison of the merged file pools their
// samples.
func identity(r *benchfmt.Result) string {
	var b strings.Builder
	b.Write(r.Name.Full())
	for _, c := range r.Config {
		if ignoredConfigKey(c.Key) {
			continue
		}
		b.WriteByte('\x00')
		b.WriteString(c.Key)
		b.WriteByte('=')
		b.Write(c.Value)
	}
	return b.String()
}

// ignoredConfigKey reports whether key is one of ignoredConfig's.
func ignoredConfigKey(key string) bool {
	for k := range strings.SplitSeq(ignoredConfig, ",") {
		if k == key {
			return true
		}
	}
	return false
}
