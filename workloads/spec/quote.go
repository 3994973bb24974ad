package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxQuote is how many bytes of a line, field name or value an error
// quotes, so that a file that is not what it should be (a binary file, a
// line of megabytes, a field name or value of megabytes) still gets an
// error of one short line.
const maxQuote = 80

// maxPath is the longest file path an error names whole: no system opens a
// longer one, so a longer path in a spec is cut like a value.
const maxPath = 4096

// cut returns the first maxQuote bytes of s, cut at a character's start.
func cut(s string) string {
	end := maxQuote
	for i := 1; i < utf8.UTFMax && !utf8.RuneStart(s[end]); i++ {
		end--
	}
	return s[:end]
}

// quote quotes s for an error: whole, or if it is longer than maxQuote, its
// first maxQuote bytes, then "..." and its length.
func quote(s string) string {
	if len(s) <= maxQuote {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(cut(s)), len(s))
}

// clip is quote for text shown bare (a number, a name): s itself, or its
// first maxQuote bytes, then "..." and its length.
func clip(s string) string {
	if len(s) <= maxQuote {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", cut(s), len(s))
}

// Quote is quote for the messages of other packages: a value from the
// command line (a workload name, a --param) quoted whole, or its first
// 80 bytes, then "..." and its length.
func Quote(s string) string { return quote(s) }

// Clip is clip for the messages of other packages: a value shown bare, or
// quoted as Quote does when it holds a control character or bytes that
// are not UTF-8, so that it never reaches a terminal raw.
func Clip(s string) string {
	if !printable(s) {
		return quote(s)
	}
	return clip(s)
}

// Bound is bound for the messages of other packages: msg with every long
// quoted string or word cut, and every one holding a control character
// quoted, so that it is one short line of text.
func Bound(msg string) string { return bound(msg) }

// Printable is printable for other packages: whether s is UTF-8 text
// without a control character (a C0 or C1 control, DEL, a bidirectional
// control, a line or paragraph separator), which reaches a terminal as it
// is.
func Printable(s string) bool { return printable(s) }

// printable reports whether s is UTF-8 text without a control
// character: text that reaches a terminal as it is, shown on the line
// where it stands. A control character is one of the C0 and C1 controls
// and DEL (an escape sequence, a newline), a bidirectional control (an
// override, which reorders the rest of the line as the terminal shows
// it) or a line or paragraph separator. Any other character is text in
// some script, shown as written: an ideographic or no-break space, a
// zero-width joiner inside an emoji, a combining accent.
func printable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, control)
}

// control reports whether r is a control character (printable).
func control(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

// bound returns the message msg with every quoted string (as %q writes it)
// longer than maxQuote quoted as quote does, every other run of bytes
// without a space longer than maxQuote cut as clip does, and every such run
// holding a control character or bytes that are not UTF-8 quoted: the
// message of an error that names a spec's strings, whatever their length
// and bytes, is one short line of text.
func bound(msg string) string {
	var b strings.Builder
	for i := 0; i < len(msg); {
		switch c := msg[i]; {
		case c == ' ':
			b.WriteByte(c)
			i++
			continue
		case c == '"':
			if q, err := strconv.QuotedPrefix(msg[i:]); err == nil {
				i += len(q)
				if s, _ := strconv.Unquote(q); len(s) > maxQuote {
					q = quote(s)
				}
				b.WriteString(q)
				continue
			}
		}
		j := i + 1
		for j < len(msg) && msg[j] != ' ' && msg[j] != '"' {
			j++
		}
		switch w := msg[i:j]; {
		case !printable(w):
			b.WriteString(quote(w))
		default:
			b.WriteString(clip(w))
		}
		i = j
	}
	return b.String()
}

// showField returns a field path for an error: each member name longer
// than maxQuote cut as clip does, and the whole path quoted if a member
// name holds a control character or bytes that are not UTF-8.
func showField(f string) string {
	if len(f) <= maxQuote && printable(f) {
		return f
	}
	var b strings.Builder
	start := 0
	for i := 0; i <= len(f); i++ {
		if i < len(f) && f[i] != '.' && f[i] != '[' && f[i] != ']' {
			continue
		}
		b.WriteString(clip(f[start:i]))
		if i < len(f) {
			b.WriteByte(f[i])
		}
		start = i + 1
	}
	s := b.String()
	if !printable(s) {
		return strconv.Quote(s)
	}
	return s
}

// showFile returns a file path for an error: whole, unless it is longer
// than any system opens (a spec's csv field of megabytes) and then cut as
// clip does, or holds a control character or bytes that are not UTF-8
// (a file named with a newline or an escape sequence) and then quoted as
// quote does, so that it never reaches a terminal raw.
func showFile(path string) string {
	switch {
	case !printable(path):
		return quote(path)
	case len(path) <= maxPath:
		return path
	}
	return clip(path)
}

// Path is showFile for the messages of other packages: a file path shown
// whole when it is printable text no longer than any system opens, cut when
// longer, and quoted (its first 80 bytes and its length, control
// characters escaped) when it holds a control character or bytes that are
// not UTF-8.
func Path(path string) string { return showFile(path) }

// PathErr returns the message of err with the paths of the *os.PathError
// or *os.LinkError it is or wraps shown as Path shows them: an operating
// system error names its file raw ("open a\nb: no such file or
// directory").
func PathErr(err error) string {
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg = strings.Replace(msg, pe.Error(), pe.Op+" "+Path(pe.Path)+": "+pe.Err.Error(), 1)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		msg = strings.Replace(msg, le.Error(), le.Op+" "+Path(le.Old)+" "+Path(le.New)+": "+le.Err.Error(), 1)
	}
	return msg
}
