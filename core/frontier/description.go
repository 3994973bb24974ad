package frontier

import (
	"fmt"
	"strings"
)

// Description bounds a batch: it holds exactly the updates of the stream with
// times in [Lower, Upper), and its times may have been advanced by Since
// (§1.4). For every t beyond Since, accumulating the batch at t equals
// accumulating the original updates of [Lower, Upper) at t.
type Description struct {
	Lower, Upper, Since Frontier
}

// Contains reports whether time t lies in [Lower, Upper).
func (d Description) Contains(t Time) bool { return d.Lower.Beyond(t) && !d.Upper.Beyond(t) }

// String formats d as "[lower, upper) since S", e.g. "[{0}, {3}) since {0}".
func (d Description) String() string {
	return fmt.Sprintf("[%v, %v) since %v", d.Lower, d.Upper, d.Since)
}

// ParseDescription parses the String form of a Description. A description
// whose upper is before its lower bounds no batch (B3) and is an error.
func ParseDescription(s string) (Description, error) {
	var d Description
	rest := strings.TrimSpace(s)
	if !strings.HasPrefix(rest, "[") {
		return d, fmt.Errorf("frontier: description %q: want [lower, upper) since S", s)
	}
	body, since, ok := strings.Cut(rest[1:], ")")
	if !ok {
		return d, fmt.Errorf("frontier: description %q: missing ')'", s)
	}
	lo, up, ok := strings.Cut(body, ",")
	if !ok {
		return d, fmt.Errorf("frontier: description %q: missing ','", s)
	}
	since = strings.TrimSpace(since)
	if !strings.HasPrefix(since, "since") {
		return d, fmt.Errorf("frontier: description %q: missing 'since'", s)
	}
	var err error
	if d.Lower, err = Parse(lo); err != nil {
		return d, err
	}
	if d.Upper, err = Parse(up); err != nil {
		return d, err
	}
	if d.Since, err = Parse(strings.TrimPrefix(since, "since")); err != nil {
		return d, err
	}
	if !d.Lower.LessEqual(d.Upper) {
		return Description{}, fmt.Errorf("frontier: description %q: upper %v is before lower %v", s, d.Upper, d.Lower)
	}
	return d, nil
}
