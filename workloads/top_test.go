package workloads

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tracebench/tracebench/core/render"
)

// TestPeeksAtTheLargestTime: a spec's as_of may be 2^64−1 (docs/spec.md
// "Fields"), and `Peeks` reads one-shot at it. The read's until, as_of +
// 1 at every other time, would wrap to 0 there, before the as_of, and
// the runtime refuse the read; at the largest time the read has no
// until, and it completes, in both modes. At 2^64−2, the largest time an
// update may have, the until is 2^64−1.
func TestPeeksAtTheLargestTime(t *testing.T) {
	for _, asOf := range []string{"18446744073709551615", "18446744073709551614"} {
		src := `{"version": 1, "name": "w", "as_of": ` + asOf + `,
  "inputs": {"a": {"columns": ["k", "x"], "rows": [[0,1,2,20],[18446744073709551613,1,1,10],[18446744073709551614,1,3,30]]}},
  "indexes": {"a_k": {"on": "a", "key": ["k"]}},
  "query": {"from": [{"as": "p", "collection": "a"}]}}`
		s, tabs := decodeAndLoad(t, "w.json", src)
		for _, mode := range []render.Mode{render.Imported, render.Direct} {
			t.Run(fmt.Sprintf("as_of=%s/%v", asOf, mode), func(t *testing.T) {
				se, err := NewSession(s, tabs, SessionOptions{Workers: 1, Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				defer se.Close(context.Background())
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				lat, err := se.Peeks(ctx, 2)
				if err != nil {
					t.Fatalf("Peeks: %v", err)
				}
				if len(lat) != 2 {
					t.Fatalf("Peeks: %d latencies, want 2", len(lat))
				}
			})
		}
	}
}
