package runtime

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// failingIndexDesc declares index id as its export and fails its Build.
func failingIndexDesc(dfID, id string) dataflow.Desc {
	return dataflow.Desc{
		ID: dfID, Maintained: true, AsOf: frontier.At(0), Until: frontier.Empty(), Exports: []string{id},
		Build: func(*dataflow.Context) error { return errors.New("no index today") },
	}
}

// twoReadsDesc is a query importing indexes a and b (either may be the
// other's alias) and capturing nothing: an import read through a Keep.
func twoReadsDesc(dfID, a, b string) dataflow.Desc {
	return dataflow.Desc{
		ID: dfID, AsOf: frontier.At(0), Until: frontier.Empty(),
		Build: func(c *dataflow.Context) error {
			for _, id := range []string{a, b} {
				im, err := c.ImportIndex(id)
				if err != nil {
					return err
				}
				c.Capture(dataflow.NewCapture(c.Peers()), im.Oks)
			}
			return nil
		},
	}
}

// dropScript is a random sequence of the commands a drop meets: indexes
// created, failing, freed and dropped under a few ids used again and
// again; queries' and Maintained re-exports of them (of re-exports too);
// readers of any, and readers of two at once. Each step is the command
// sent to s, with what Send refused; every few steps a Sync and the
// errors taken then, each with its command's sequence number. It returns
// the script's outcome as lines, the errors of its first runtime in the
// order recorded, and the
// sequence numbers of each dataflow id's creates.
func dropScript(t *testing.T, s *setup, seed uint64, steps int) (lines []string, errs []*CommandError, creates map[string][]uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	s.send("in", 2, []int64{0, 1, 1, 10}, []int64{0, 1, 2, 20})
	s.advance("in", 2, frontier.At(2))
	creates = map[string][]uint64{}
	var exported []string // every id exported so far, live or not
	pick := func() string {
		if len(exported) == 0 || rng.IntN(2) == 0 {
			return fmt.Sprintf("i%d", rng.IntN(4))
		}
		return exported[rng.IntN(len(exported))]
	}
	// Few dataflow ids, so that each is dropped and created again.
	dfID := func(kind string) string { return fmt.Sprintf("%s%d", kind, rng.IntN(5)) }
	export := func(id string) {
		if !slices.Contains(exported, id) {
			exported = append(exported, id)
		}
	}
	sync := func() {
		if err := s.ctl.Sync(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		// In the order recorded (TakeErrors sorts a command's errors
		// by message), from the first runtime.
		r := s.rts[0]
		r.errMu.Lock()
		errs = append(errs, r.errs...)
		r.errMu.Unlock()
		taken := s.ctl.TakeErrors()
		var got []string
		for _, e := range taken {
			got = append(got, fmt.Sprintf("  %d: %s", e.Seq, e.Err))
		}
		slices.Sort(got) // the pair's two runtimes report in their own order
		lines = append(lines, got...)
	}
	for step := range steps {
		var cmd Command
		switch k := rng.IntN(20); {
		case k < 4:
			i := fmt.Sprintf("i%d", rng.IntN(4))
			cmd = CreateDataflow{Desc: indexDesc(i, "in", 2, []int{0}, 0, nil)}
			export(i)
		case k < 5:
			i := fmt.Sprintf("i%d", rng.IntN(4))
			cmd = CreateDataflow{Desc: failingIndexDesc("bad "+i, i)}
			export(i)
		case k < 7:
			id := dfID("q")
			cmd = CreateDataflow{Desc: reexportDesc(id, pick(), id+" out", false)}
			export(id + " out")
		case k < 8:
			id := dfID("m")
			cmd = CreateDataflow{Desc: reexportDesc(id, pick(), id+" out", true)}
			export(id + " out")
		case k < 10:
			cmd = CreateDataflow{Desc: readDesc(dfID("r"), pick(), 0, frontier.Empty(), dataflow.NewCapture(s.workers))}
		case k < 11:
			cmd = CreateDataflow{Desc: twoReadsDesc(dfID("t"), pick(), pick())}
		case k < 13:
			cmd = AllowCompaction{ID: pick(), Frontier: frontier.Empty()}
		case k < 14:
			cmd = AllowCompaction{ID: pick(), Frontier: frontier.At(1)}
		default:
			ids := []string{"maintain " + fmt.Sprintf("i%d", rng.IntN(4)), "bad " + fmt.Sprintf("i%d", rng.IntN(4)), dfID("q"), dfID("m"), dfID("r"), dfID("t")}
			cmd = DropDataflow{ID: ids[rng.IntN(len(ids))]}
		}
		line := fmt.Sprintf("%d %T %s", step, cmd, cmdID(cmd))
		if err := s.ctl.Send(cmd); err != nil {
			line += ": refused: " + err.Error()
		} else if c, ok := cmd.(CreateDataflow); ok {
			s.ctl.mu.Lock()
			creates[c.Desc.ID] = append(creates[c.Desc.ID], s.ctl.seq)
			s.ctl.mu.Unlock()
		}
		lines = append(lines, line)
		if rng.IntN(6) == 0 {
			sync()
		}
	}
	sync()
	return lines, errs, creates
}

// cmdID names what a command of dropScript is about.
func cmdID(cmd Command) string {
	switch c := cmd.(type) {
	case CreateDataflow:
		return c.Desc.ID
	case DropDataflow:
		return c.ID
	case AllowCompaction:
		return fmt.Sprintf("%s to %v", c.ID, c.Frontier)
	}
	return ""
}

// updateDrops writes testdata/drops_at_random.txt from the code as it is.
var updateDrops = flag.Bool("update-drops", false, "write testdata/drops_at_random.txt")

// TestDropsAtRandomAgree runs random scripts of creates, failed creates,
// frees, drops and creates again under the same ids (dropScript) in Solo
// and in the pair, on one worker and two: every command's refusal and
// error (ErrIndexDropped, ErrSourceEnded, a failed create named, ...) is
// the same in all four, each reported once. On one Solo worker a command's
// errors of ended imports come in the order the dataflows told were
// created, and the whole of what it reports, in the order recorded, is
// testdata/drops_at_random.txt: written by the code before drops cost
// what is dropped (796a495), whose walks over every dataflow in creation
// order the filed imports replace, so that a drop tells what it told
// then, as many times, in the same order.
func TestDropsAtRandomAgree(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	const steps = 240
	var golden []string
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			var first string
			for _, mode := range []string{"solo", "pair"} {
				for _, w := range []int{1, 2} {
					s := newSetup(t, mode, w)
					lines, errs, creates := dropScript(t, s, seed, steps)
					got := strings.Join(lines, "\n")
					if first == "" {
						first = got
						checkToldInCreationOrder(t, errs, creates)
						golden = append(golden, fmt.Sprintf("== seed %d", seed))
						golden = append(golden, lines...)
						for _, e := range errs {
							golden = append(golden, fmt.Sprintf("recorded %d: %v", e.Seq, e.Err))
						}
					} else if got != first {
						t.Fatalf("%s workers=%d disagrees with solo workers=1:\n%s", mode, w, lineDiff(first, got))
					}
					s.ctl.Shutdown()
				}
			}
		})
	}
	path := filepath.Join("testdata", "drops_at_random.txt")
	got := strings.Join(golden, "\n") + "\n"
	if *updateDrops {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("Solo's errors differ from %s (-update-drops writes it):\n%s", path, lineDiff(string(want), got))
	}
}

// checkToldInCreationOrder requires that, among the errors of one command
// that tell a dataflow of an import's end (ErrIndexDropped), the
// dataflows come in the order of their creates (the last create of each
// id before the command): one Solo worker reports in the order it
// applies.
func checkToldInCreationOrder(t *testing.T, errs []*CommandError, creates map[string][]uint64) {
	t.Helper()
	last := map[uint64]string{} // command → the dataflow it told last
	lastAt := map[uint64]uint64{}
	for _, e := range errs {
		if !errors.Is(e, ErrIndexDropped) {
			continue
		}
		df := strings.TrimPrefix(strings.SplitN(e.Err.Error(), ":", 2)[0], "dataflow ")
		var at uint64
		for _, c := range creates[df] {
			if c < e.Seq {
				at = c
			}
		}
		if at == 0 {
			t.Errorf("command %d told dataflow %s, never created before it: %v", e.Seq, df, e)
		}
		if prev, ok := lastAt[e.Seq]; ok && at < prev {
			t.Errorf("command %d told dataflow %s (created by %d) after %s (created by %d)", e.Seq, df, at, last[e.Seq], prev)
		}
		last[e.Seq], lastAt[e.Seq] = df, at
	}
}

// lineDiff shows the first lines where a and b differ.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i, x, y)
		}
	}
	return ""
}
