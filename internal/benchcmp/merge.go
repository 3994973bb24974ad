package benchcmp

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// Merge writes the results of every file in paths, in order, as one result
// file on out: the join of the outputs of `benchrun run --shard i/n`. File
// configuration lines are written where they change and every unit metadata
// line once. Two files giving one unit metadata key different values is an
// error naming both places; so is a syntax error in any file, or a file with
// no results (ErrInput). A benchmark (name and configuration) found in more
// than one file is reported on errOut, since shards of one run are disjoint.
func Merge(out, errOut io.Writer, paths []string) error {
	if len(paths) == 0 {
		return fmt.Errorf("%w: merge needs at least one file", ErrUsage)
	}
	bw := bufio.NewWriter(out)
	w := benchfmt.NewWriter(bw)
	type place struct {
		file string
		line int
		meta *benchfmt.UnitMetadata
	}
	metas := map[benchfmt.UnitMetadataKey]place{}
	firstFile := map[string]string{} // benchmark identity -> file it was first seen in
	overlaps := map[string]bool{}
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInput, err)
		}
		r := benchfmt.NewReader(bufio.NewReader(f), path)
		n := 0
		for r.Scan() {
			switch rec := r.Result().(type) {
			case *benchfmt.SyntaxError:
				f.Close()
				return fmt.Errorf("%w: %s", ErrInput, rec.Error())
			case *benchfmt.UnitMetadata:
				file, line := rec.Pos()
				if prev, ok := metas[rec.UnitMetadataKey]; ok {
					if prev.meta.Value != rec.Value {
						f.Close()
						return fmt.Errorf("%w: %s:%d: Unit %s %s=%s conflicts with %s=%s at %s:%d",
							ErrInput, file, line, rec.OrigUnit, rec.Key, rec.Value, prev.meta.Key, prev.meta.Value, prev.file, prev.line)
					}
					continue
				}
				m := *rec
				metas[rec.UnitMetadataKey] = place{file, line, &m}
				if err := w.Write(&m); err != nil {
					f.Close()
					return err
				}
			case *benchfmt.Result:
				n++
				id := identity(rec)
				if first, ok := firstFile[id]; !ok {
					firstFile[id] = path
				} else if first != path && !overlaps[id] {
					overlaps[id] = true
					fmt.Fprintf(errOut, "benchcmp merge: %s is in both %s and %s (overlapping shards?)\n", rec.Name.Full(), first, path)
				}
				if err := w.Write(rec); err != nil {
					f.Close()
					return err
				}
			}
		}
		err = r.Err()
		f.Close()
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInput, path, err)
		}
		if n == 0 {
			return fmt.Errorf("%w: %s: no benchmark results (lines starting with Benchmark)", ErrInput, path)
		}
	}
	return bw.Flush()
}

// identity names a benchmark by its full name and file configuration.
func identity(r *benchfmt.Result) string {
	var b strings.Builder
	b.Write(r.Name.Full())
	for _, c := range r.Config {
		b.WriteByte('\x00')
		b.WriteString(c.Key)
		b.WriteByte('=')
		b.Write(c.Value)
	}
	return b.String()
}
