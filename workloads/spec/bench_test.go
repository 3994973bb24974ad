package spec

import (
	"bytes"
	"strconv"
	"testing"
)

// csvData returns n lines of time,diff,a,b with realistic widths.
func csvData(n int) []byte {
	var b bytes.Buffer
	b.WriteString("time,diff,a,b\n")
	for i := range n {
		b.WriteString(strconv.Itoa(i / 1000))
		b.WriteString(",1,")
		b.WriteString(strconv.Itoa(i * 7919 % 1000003))
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(-i))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// BenchmarkReadCSV measures CSV loading per update against a limit that
// only parses the same bytes in one pass with no line splitting, no
// checks and no table.
func BenchmarkReadCSV(b *testing.B) {
	const n = 100000
	data := csvData(n)
	b.Run("impl=ReadCSV", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := ReadCSV("b.csv", bytes.NewReader(data), []string{"a", "b"}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/update")
	})
	b.Run("impl=limit", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		body := data[bytes.IndexByte(data, '\n')+1:]
		var sink int64
		for b.Loop() {
			var v int64
			neg := false
			for _, c := range body {
				switch {
				case c >= '0' && c <= '9':
					v = v*10 + int64(c-'0')
				case c == '-':
					neg = true
				default:
					if neg {
						v = -v
					}
					sink += v
					v, neg = 0, false
				}
			}
		}
		if sink == 1 {
			b.Log(sink)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/update")
	})
}
