package benchcmp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/tracebench/tracebench/internal/benchflame"
	"github.com/tracebench/tracebench/workloads/spec"
)

// ProfileConfig configures Profile.
type ProfileConfig struct {
	// Base is the profile subtracted (the direct run, say).
	Base string
	// Other is the profile drawn against Base (the imported run).
	Other string
	// Out is the HTML file to write.
	Out string
	// Labels are the CPU sample label keys shown as root frames.
	Labels []string
	// LabelsGiven says Labels were chosen by the user (--labels), not
	// left to their default: a key of them that no sample carries is
	// then warned of (a misspelt key draws no frames).
	LabelsGiven bool
	// ErrOut gets warnings (nil: none are written).
	ErrOut io.Writer
}

// Profile writes a differential flame graph of Other minus Base to Out
// (pprof's diff_base), with cfg.Labels as root frames, so that a frame's
// width shows where Other spends more or less than Base, split by runtime
// and operator. Base and Other naming one file draw a diff of zeros,
// with a warning on ErrOut, as Compare warns of a file compared with
// itself. A profile that cannot be read is an error wrapping ErrInput;
// a failed export or write, one wrapping ErrOutput; an export stopped by
// ctx, or by SIGINT or SIGTERM to its subprocess, one wrapping
// ErrInterrupted, with nothing written. The export runs in a
// subprocess (benchflame.Write): the executable's main must call
// benchflame.RunChildIfRequested first.
func Profile(ctx context.Context, cfg ProfileConfig) error {
	if cfg.Base == "" || cfg.Other == "" || cfg.Out == "" {
		return fmt.Errorf("%w: profile needs --base BASE.pprof, OTHER.pprof and --flamegraph OUT.html", ErrUsage)
	}
	if err := checkFlamegraphOut(cfg); err != nil {
		return err
	}
	// A profile that is not there, or that this user may not read, is
	// named as every subcommand names such a file (openErr), before
	// benchflame, whose message names the call that found it ("open
	// direct.pprof: permission denied"). Only a regular file is opened
	// to see: a named pipe's open would wait for a writer, and
	// benchflame refuses one anyway.
	for _, p := range []string{cfg.Base, cfg.Other} {
		st, err := os.Stat(p)
		if err != nil {
			return openErr(p, err)
		}
		if st.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return openErr(p, err)
			}
			f.Close()
		}
	}
	if cfg.ErrOut != nil {
		if b, err := os.Stat(cfg.Base); err == nil {
			if o, err := os.Stat(cfg.Other); err == nil && os.SameFile(b, o) {
				fmt.Fprintf(cfg.ErrOut, "benchcmp: warning: --base %s and %s are the same file: it is compared with itself, and every difference is zero\n", spec.Path(cfg.Base), spec.Path(cfg.Other))
			}
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	err := benchflame.WriteFile(ctx, cfg.Out, benchflame.Options{Profile: cfg.Other, Base: cfg.Base, Labels: cfg.Labels})
	switch {
	case err == nil:
		warnUnusedLabels(cfg)
		return nil
	case errors.Is(err, benchflame.ErrProfile):
		return fmt.Errorf("%w: %s", ErrInput, flameMsg(err, benchflame.ErrProfile, ""))
	case errors.Is(err, benchflame.ErrInterrupted):
		return fmt.Errorf("%w: no flame graph written", ErrInterrupted)
	default:
		// The export failed or --flamegraph could not be written: not
		// bad input (invariant C6).
		return fmt.Errorf("%w: %s", ErrOutput, flameMsg(err, benchflame.ErrExport, "the flame graph export failed: "))
	}
}

// flameMsg is the message of benchflame's err without the sentinel
// (benchflame's own "benchflame: bad profile: " or "benchflame: export
// failed: "), which names a package and no command: what follows names
// the profile (bad2.pprof: parsing profile: …), and the command's message
// starts with benchcmp, as every other one (README "Scaling and
// profiles"). what replaces the sentinel.
func flameMsg(err, sentinel error, what string) string {
	msg := spec.PathErr(err)
	if rest, ok := strings.CutPrefix(msg, sentinel.Error()+": "); ok {
		return what + rest
	}
	return msg
}

// checkFlamegraphOut refuses, before any work, a --flamegraph path that is
// not an .html file, would overwrite an input (the same path, or the same
// file through a link) or cannot be written (a directory, a file in a
// directory that does not exist or takes no new file), and a --labels key
// pprof cannot take or one given twice.
func checkFlamegraphOut(cfg ProfileConfig) error {
	out := cfg.Out
	for i, l := range cfg.Labels {
		if !benchflame.LabelKeyOK(l) {
			return fmt.Errorf("%w: --labels: label key %s: want a non-empty key without commas or spaces", ErrUsage, spec.Quote(l))
		}
		if slices.Contains(cfg.Labels[:i], l) {
			return fmt.Errorf("%w: --labels: label key %s given twice", ErrUsage, spec.Quote(l))
		}
	}
	outInfo, outErr := os.Stat(out)
	for _, in := range []struct{ flag, path string }{{"--base", cfg.Base}, {"OTHER", cfg.Other}} {
		same := filepath.Clean(in.path) == filepath.Clean(out)
		if a, err := filepath.Abs(in.path); err == nil {
			if b, err := filepath.Abs(out); err == nil && a == b {
				same = true
			}
		}
		if inInfo, err := os.Stat(in.path); err == nil && outErr == nil && os.SameFile(inInfo, outInfo) {
			same = true
		}
		if same {
			return fmt.Errorf("%w: --flamegraph %s is the profile %s %s: it would be overwritten", ErrUsage, spec.Path(out), in.flag, spec.Path(in.path))
		}
	}
	// "-" names no standard output, as it names no standard input
	// (openErr): the page is a file, as benchrun's --flamegraph says.
	if out == "-" {
		return fmt.Errorf("%w: --flamegraph -: \"-\" is no name of standard output: give it an .html file", ErrUsage)
	}
	// As benchrun's --flamegraph: the page is HTML, whatever the name.
	if !benchflame.HTMLName(out) {
		return fmt.Errorf("%w: --flamegraph %s: must name an .html file", ErrUsage, spec.Clip(out))
	}
	if outErr == nil && outInfo.IsDir() {
		return fmt.Errorf("%w: --flamegraph %s: is a directory, not a file to write", ErrUsage, spec.Path(out))
	}
	dir := filepath.Dir(out)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: --flamegraph %s: its directory %s does not exist", ErrUsage, spec.Path(out), spec.Path(dir))
	}
	// The page is written through a temporary file in that directory
	// (renamed into place), after the export: a directory that takes no
	// new file (read-only, or a read-only file system) is found now, not
	// after the export's work.
	if outErr != nil || outInfo.Mode().IsRegular() {
		f, err := os.CreateTemp(dir, benchflame.TempPattern(out))
		if err != nil {
			return fmt.Errorf("%w: --flamegraph %s: its directory %s takes no new file: %v", ErrUsage, spec.Path(out), spec.Path(dir), errors.Unwrap(err))
		}
		f.Close()
		os.Remove(f.Name())
	}
	return nil
}

// warnUnusedLabels warns on cfg.ErrOut of each --labels key the user gave
// (LabelsGiven) that no sample of either profile carries: the flame graph has no frames for it, which a
// misspelt key (--labels operater) would otherwise leave unexplained.
// Profiles that are not regular files (read once, by the export) are not
// looked at.
func warnUnusedLabels(cfg ProfileConfig) {
	if cfg.ErrOut == nil || !cfg.LabelsGiven || len(cfg.Labels) == 0 {
		return
	}
	seen := map[string]bool{}
	for _, p := range []string{cfg.Base, cfg.Other} {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return
		}
		f, err := os.Open(p)
		if err != nil {
			return
		}
		prof, err := profile.Parse(f)
		f.Close()
		if err != nil {
			return
		}
		for _, smp := range prof.Sample {
			for k := range smp.Label {
				seen[k] = true
			}
			for k := range smp.NumLabel {
				seen[k] = true
			}
		}
	}
	for _, l := range cfg.Labels {
		if !seen[l] {
			fmt.Fprintf(cfg.ErrOut, "benchcmp: warning: --labels %s: no sample of %s or %s carries that label: the flame graph has no frames for it\n", spec.Quote(l), spec.Path(cfg.Base), spec.Path(cfg.Other))
		}
	}
}
