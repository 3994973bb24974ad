package gen

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/tracebench/tracebench/workloads/spec"
)

// TestGeneratorProperties checks G2–G4 on random generators: update counts
// per time, retraction counts and targets, no negative row count, values
// within their distribution's range, and determinism.
func TestGeneratorProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := spec.Generate{
			Rows:    rapid.Uint64Range(0, 3000).Draw(t, "rows"),
			Seed:    rapid.Uint64().Draw(t, "seed"),
			Batches: rapid.Uint64Range(1, 40).Draw(t, "batches"),
			Retract: rapid.Float64Range(0, 0.95).Draw(t, "retract"),
		}
		ncols := rapid.IntRange(1, 3).Draw(t, "columns")
		var names []string
		for i := range ncols {
			c := spec.ColumnGen{Column: string(rune('a' + i))}
			switch rapid.IntRange(0, 2).Draw(t, "dist") {
			case 0:
				c.Dist = spec.DistSeq
			case 1:
				c.Dist = spec.DistUniform
				c.Min = rapid.Int64Range(-1000, 1000).Draw(t, "min")
				c.Max = c.Min + rapid.Int64Range(0, 50).Draw(t, "span")
			case 2:
				c.Dist = spec.DistZipf
				c.N = rapid.Uint64Range(1, 200).Draw(t, "n")
				c.S = rapid.Float64Range(0.01, 3).Draw(t, "s")
			}
			g.Columns = append(g.Columns, c)
			names = append(names, c.Column)
		}
		runSeed := rapid.Uint64().Draw(t, "runSeed")
		tab := Table(&g, names, runSeed)
		if uint64(tab.Len()) != g.Rows {
			t.Fatalf("%d updates, want %d", tab.Len(), g.Rows)
		}
		perTime := map[uint64]uint64{}
		presentAt := map[uint64]int64{} // earlier insertions still present when a time starts
		negAt := map[uint64]uint64{}
		counts := map[string]int64{}
		presentBefore := int64(0) // insertions from earlier times still present
		var cur uint64
		var curInserts int64
		for i := range tab.Len() {
			tm := tab.Times[i]
			if i > 0 && tm < tab.Times[i-1] {
				t.Fatalf("times go back at update %d", i)
			}
			if tm != cur || i == 0 {
				presentBefore += curInserts
				curInserts = 0
				cur = tm
				presentAt[tm] = presentBefore
			}
			perTime[tm]++
			row := tab.Row(i)
			key := fmt.Sprint(row)
			for j, v := range row {
				c := g.Columns[j]
				switch c.Dist {
				case spec.DistUniform:
					if v < c.Min || v > c.Max {
						t.Fatalf("uniform %d outside %d..%d", v, c.Min, c.Max)
					}
				case spec.DistZipf:
					if v < 0 || uint64(v) >= c.N {
						t.Fatalf("zipf %d outside 0..%d", v, c.N-1)
					}
				}
			}
			switch tab.Diffs[i] {
			case 1:
				curInserts++
			case -1:
				negAt[tm]++
				presentBefore--
				if presentBefore < 0 {
					t.Fatalf("more retractions than earlier rows at time %d", tm)
				}
			default:
				t.Fatalf("diff %d", tab.Diffs[i])
			}
			counts[key] += tab.Diffs[i]
			if counts[key] < 0 {
				t.Fatalf("row %v count below zero at update %d", row, i)
			}
		}
		for b := range g.Batches {
			want := g.Rows / g.Batches
			if b < g.Rows%g.Batches {
				want++
			}
			if perTime[b] != want {
				t.Fatalf("time %d has %d updates, want %d", b, perTime[b], want)
			}
			if b == 0 && negAt[0] != 0 {
				t.Fatalf("retractions at time 0")
			}
			if wantR := min(uint64(float64(want)*g.Retract), uint64(presentAt[b])); b > 0 && negAt[b] != wantR {
				t.Fatalf("time %d: %d retractions, want min(floor(%d × %v), %d present)", b, negAt[b], want, g.Retract, presentAt[b])
			}
		}
		again := Table(&g, names, runSeed)
		if len(again.Vals) != len(tab.Vals) {
			t.Fatal("a second generation differs")
		}
		for i := range tab.Vals {
			if again.Vals[i] != tab.Vals[i] {
				t.Fatal("a second generation differs")
			}
		}
	})
}
