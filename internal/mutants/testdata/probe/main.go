// Command probe links every package that holds a mutant site, reaching the
// functions that hold them, so that TestNormalBuildHasNoMutantSwitch can
// look for a mutant switch in a real binary.
package main

import (
	"fmt"
	"os"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/core/join"
	"github.com/tracebench/tracebench/core/reduce"
	"github.com/tracebench/tracebench/core/runtime"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
)

func main() {
	// Never true when run; the linker cannot know.
	if len(os.Args) > 99 {
		reach()
	}
	fmt.Println("probe")
}

// reach calls into every function with a mutant site.
func reach() {
	g := share.NewRegistry()
	h, w, s := share.NewTrace(batch.Arity{Key: 1, Val: 1}, spine.Options{})
	_, _, e := share.NewTrace(batch.Arity{Key: 1, Val: 1}, spine.Options{})
	tok, _ := g.PublishIncarnation(share.Incarnation{ID: "x", AsOf: frontier.At(1)}, s, e)
	im, _ := tok.Slot().Oks().Import(frontier.At(1), frontier.Empty())
	im.Reader().SetLogicalCompaction(frontier.At(2))
	b, _ := g.AwaitPeerBundle(share.Incarnation{ID: "x", AsOf: frontier.At(1)}, nil)
	b.Release()
	s.Refresh()
	_ = w.Close()
	h.Release()
	batch.NewMerger(nil, nil, frontier.Min())
	p, _ := join.NewPath(join.PathOptions{})
	d, _ := join.NewDelta([]*join.Path{p}, nil)
	_ = d.Step(nil, nil, nil, nil)
	j, _ := join.NewBinary(join.Side{}, join.Side{}, join.BinaryOptions{})
	_ = j.Step(nil, nil, nil)
	r, _ := reduce.New(reduce.Input{}, reduce.Options{})
	_, _ = r.Step(nil, frontier.Min())
	_, _, _, _ = runtime.Pair(1, spine.Options{})
}
