package benchcmp

import (
	"bytes"
	"encoding/csv"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// benchstatRow is one data row of `benchstat -format csv` for two files.
type benchstatRow struct {
	unit, name string
	old, new   float64
	delta      string // "~" or "+1.23%"
	p          float64
}

// runBenchstat runs the benchstat pinned in go.mod (go tool benchstat) and
// parses its CSV output: blocks of config lines, a header of file labels, a
// header of units, then rows name,center,CI,center,CI,vs base,P.
func runBenchstat(t *testing.T, args ...string) []benchstatRow {
	t.Helper()
	cmd := exec.Command("go", append([]string{"tool", "benchstat", "-format", "csv"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go tool benchstat %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	r := csv.NewReader(&stdout)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("benchstat CSV: %v", err)
	}
	var rows []benchstatRow
	unit := ""
	for _, rec := range recs {
		if len(rec) == 7 && rec[0] == "" && rec[1] != "" && rec[2] == "CI" {
			unit = rec[1]
			continue
		}
		if len(rec) != 7 || !strings.HasPrefix(rec[6], "p=") || rec[0] == "geomean" {
			continue
		}
		old, err1 := strconv.ParseFloat(rec[1], 64)
		nw, err2 := strconv.ParseFloat(rec[3], 64)
		p, err3 := strconv.ParseFloat(strings.Fields(strings.TrimPrefix(rec[6], "p="))[0], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("benchstat row %q: %v %v %v", rec, err1, err2, err3)
		}
		rows = append(rows, benchstatRow{unit: unit, name: rec[0], old: old, new: nw, delta: rec[5], p: p})
	}
	return rows
}

// TestAgreesWithBenchstat: on the same files, benchstat (go tool benchstat,
// reading our files unchanged) and benchcmp give the same centers, the same
// p-values (benchstat prints three decimals) and the same ~ or delta.
func TestAgreesWithBenchstat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs go tool benchstat")
	}
	for _, files := range [][]string{
		{td("batch-a.txt"), td("batch-b.txt")},
		{td("regress-old.txt"), td("regress-new.txt")},
		{td("noise-old.txt"), td("noise-new.txt")},
		{td("alpha-old.txt"), td("alpha-new.txt")}, // p = alpha exactly
	} {
		t.Run(files[0], func(t *testing.T) {
			bs := runBenchstat(t, append([]string{"-ignore", "commit,cpu,go"}, files...)...)
			if len(bs) == 0 {
				t.Fatal("benchstat printed no comparison rows")
			}
			cfg := DefaultCompareConfig()
			cfg.Files = files
			rep, err := BuildReport(nil, cfg)
			if err != nil {
				t.Fatal(err)
			}
			cells := map[string][2]*Cell{}
			for _, tb := range rep.Tables {
				if tb.Summary == "exact" {
					continue // benchstat prints no p-value for exact units
				}
				for _, r := range tb.Rows {
					cells[tb.Unit+" "+r.Name] = [2]*Cell{r.Cells[0], r.Cells[1]}
				}
			}
			for _, b := range bs {
				c, ok := cells[b.unit+" "+b.name]
				if !ok || c[0] == nil || c[1] == nil {
					t.Errorf("%s %s: benchstat compares it, benchcmp does not", b.unit, b.name)
					continue
				}
				if !close(c[0].Center, b.old) || !close(c[1].Center, b.new) {
					t.Errorf("%s %s: centers %g, %g; benchstat %g, %g", b.unit, b.name, c[0].Center, c[1].Center, b.old, b.new)
				}
				if p := math.Round(c[1].P*1000) / 1000; p != b.p {
					t.Errorf("%s %s: p %.3f; benchstat %.3f", b.unit, b.name, c[1].P, b.p)
				}
				if d := deltaText(c[1]); d != b.delta && !(b.delta == "~" && d == "~") {
					t.Errorf("%s %s: delta %q; benchstat %q", b.unit, b.name, d, b.delta)
				}
				delete(cells, b.unit+" "+b.name)
			}
			for k, c := range cells {
				if c[0] != nil && c[1] != nil && c[1].Compared {
					t.Errorf("%s: benchcmp compares it, benchstat does not", k)
				}
			}
			t.Logf("%d comparisons agree", len(bs))
		})
	}
}

func close(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

// TestBenchstatReadsOurFiles: benchstat reads every result file benchcmp
// reads, the crafted benchrun-style ones included, without a complaint.
func TestBenchstatReadsOurFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs go tool benchstat")
	}
	for _, f := range []string{"suite.txt", "shard0.txt", "regress-old.txt", "install.txt"} {
		cmd := exec.Command("go", "tool", "benchstat", td(f))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("go tool benchstat %s: %v\n%s", f, err, out)
			continue
		}
		if bytes.Contains(out, []byte("syntax error")) || bytes.Contains(out, []byte(": ")) && bytes.Contains(out, []byte(f+":")) {
			t.Errorf("go tool benchstat %s complains:\n%s", f, out)
		}
		if !bytes.Contains(out, []byte("geomean")) {
			t.Errorf("go tool benchstat %s printed no table:\n%s", f, out)
		}
	}
}
