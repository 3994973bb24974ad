package spec

import (
	"cmp"
	"fmt"
	"go/token"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// ReadFile reads and decodes the spec at path. Relative paths inside it
// resolve against path's directory, or, for a descriptor's name such as
// /dev/stdin, against the directory of the file it has open (specDir).
func ReadFile(path string) (*Spec, error) {
	return ReadFileWith(path, nil)
}

// ReadFileWith reads the spec at path like ReadFile, applying overrides
// as DecodeWith does.
//
// The file must be a regular file, as a CSV input must: a command reads
// its spec more than once (benchrun run checks its streams against it,
// then runs it), so a pipe (cat w.json | benchrun run /dev/stdin) read
// empty the second time, and a named pipe no one writes blocked the open
// where Ctrl-C could not stop it. Either is refused before it is opened.
func ReadFileWith(path string, overrides []Override) (*Spec, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read spec: " + unwrapPathErr(err)}
	}
	if msg := notRegular(st, "a spec is read more than once (the command's checks, then the command)"); msg != "" {
		return nil, &Error{File: path, Msg: "cannot read spec: " + msg}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read spec: " + unwrapPathErr(err)}
	}
	return DecodeWith(path, specDir(path, st), data, overrides)
}

// specDir returns the directory a spec's relative paths resolve against:
// the directory of the spec file (docs/spec.md "Decoding is strict").
// A descriptor's name (/dev/stdin, /dev/fd/N, /proc/self/fd/N, as in
// `benchrun validate /dev/stdin < specs/w.json`) stands for the file the
// descriptor has open, not for a file in /dev or /dev/fd: its directory
// is that file's, when the link resolves to the very file st describes.
// Any other path, a link of the user's own included, keeps its directory,
// as the kernel reaches it (PhysicalDir: dirlink/../w.json is in the
// directory above dirlink's target).
func specDir(path string, st os.FileInfo) string {
	dir := PhysicalDir(path)
	if !descriptorName(path) {
		return dir
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil || !filepath.IsAbs(real) || descriptorName(real) {
		return dir
	}
	if rst, err := os.Stat(real); err != nil || !os.SameFile(st, rst) {
		return dir
	}
	return filepath.Dir(real)
}

// descriptorName reports whether path names an open descriptor of this
// process rather than a file of a directory: /dev/stdin, /dev/fd/N or
// /proc/self/fd/N (and /proc/PID/fd/N).
func descriptorName(path string) bool {
	p, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	if p == "/dev/stdin" {
		return true
	}
	d := filepath.Dir(p)
	if d == "/dev/fd" || d == "/proc/self/fd" {
		return true
	}
	pid, ok := strings.CutPrefix(d, "/proc/")
	pid, ok2 := strings.CutSuffix(pid, "/fd")
	if !ok || !ok2 || pid == "" {
		return false
	}
	for _, c := range pid {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// unwrapPathErr drops the path from an *os.PathError message, which the
// caller already names.
func unwrapPathErr(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// Decode decodes and validates a spec. file names it in messages; dir is
// where relative paths resolve. Decoding is strict: unknown and duplicate
// fields, wrong types, inexact integers and names outside the name rule
// are errors naming the field and its line.
func Decode(file, dir string, data []byte) (*Spec, error) {
	return DecodeWith(file, dir, data, nil)
}

// decoder converts a node tree into a Spec, recording each field's line.
type decoder struct {
	file string
	s    *Spec
}

func (d *decoder) errf(n *node, field, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.line
	}
	return &Error{File: d.file, Line: line, Field: field, Msg: bound(fmt.Sprintf(format, args...))}
}

// object checks that n is an object whose members are all in allowed and
// whose required members are present, and records the members' lines.
func (d *decoder) object(n *node, field string, allowed, required []string) error {
	if n.kind != kindObject {
		return d.errf(n, field, "must be an object, not %s", n.kind)
	}
	for i, k := range n.keys {
		f := join(field, k)
		d.s.lines[f] = n.vals[i].line
		if !contains(allowed, k) {
			return d.errf(n.vals[i], f, "unknown field (allowed: %s)", strings.Join(allowed, ", "))
		}
	}
	for _, r := range required {
		if n.get(r) == nil {
			return d.errf(n, join(field, r), "required field is missing")
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *decoder) str(n *node, field string) (string, error) {
	if n.kind != kindString {
		return "", d.errf(n, field, "must be a string, not %s", n.kind)
	}
	return n.text, nil
}

func (d *decoder) boolean(n *node, field string) (bool, error) {
	if n.kind != kindBool {
		return false, d.errf(n, field, "must be true or false, not %s", n.kind)
	}
	return n.b, nil
}

// name reads a string that must follow the name rule.
func (d *decoder) name(n *node, field string) (string, error) {
	s, err := d.str(n, field)
	if err != nil {
		return "", err
	}
	if msg := CheckName(s); msg != "" {
		return "", d.errf(n, field, "%s", msg)
	}
	return s, nil
}

// MaxName is the longest name, in bytes. Names reach every result line
// (the workload name, parameters that are field paths, operators' error
// units), and a result file's reader takes lines of at most 65,535 bytes:
// unbounded names would let benchrun write lines benchcmp cannot read.
const MaxName = 1024

// CheckName returns why s is not a valid name, or "" when it is: names
// match [a-z_][a-z0-9_]*, are at most MaxName bytes, are not Go keywords
// and are not time or diff.
func CheckName(s string) string {
	if s == "" {
		return "name is empty"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == '_' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9'
		if !ok {
			return fmt.Sprintf("bad name %q: names match [a-z_][a-z0-9_]*", s)
		}
	}
	if len(s) > MaxName {
		// The field names it: the name itself is not repeated.
		return fmt.Sprintf("a name of %d bytes: names are at most %d bytes", len(s), MaxName)
	}
	if token.IsKeyword(s) {
		return fmt.Sprintf("bad name %q: a Go keyword", s)
	}
	if s == "time" || s == "diff" {
		return fmt.Sprintf("bad name %q: reserved for the update's time and diff", s)
	}
	return ""
}

// strings reads an array of strings; names says whether each must be a name.
func (d *decoder) strings(n *node, field string, names bool) ([]string, error) {
	if n.kind != kindArray {
		return nil, d.errf(n, field, "must be an array, not %s", n.kind)
	}
	out := make([]string, 0, len(n.elems))
	for i, e := range n.elems {
		f := fmt.Sprintf("%s[%d]", field, i)
		d.s.lines[f] = e.line
		var s string
		var err error
		if names {
			s, err = d.name(e, f)
		} else {
			s, err = d.str(e, f)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// integer returns the exact integer value of a number node, accepting
// exponent forms that denote an integer (1e6) and refusing fractions.
func (d *decoder) integer(n *node, field string) (*big.Int, error) {
	if n.kind != kindNumber {
		return nil, d.errf(n, field, "must be an integer, not %s", n.kind)
	}
	return exactInteger(n.text, func(msg string) error { return d.errf(n, field, "%s", msg) })
}

// numberRE is the JSON number grammar; group 1 is the exponent.
var numberRE = regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// exactInteger parses the text of a JSON number as an exact integer.
// The magnitude is judged from the digits and the exponent before any
// digit is converted: 1e-400 is a fraction, not an integer, and 1e400 is
// beyond every integer field, whatever the size of the exponent. Only
// the digits before the decimal point, at most 40 of them, are then
// converted; math/big's conversion of a number's every digit took time
// quadratic in their count (18 s for a field of 2,000,000 digits). A
// plain integer of more than 40 digits is returned as ±tooLong, which
// every field refuses naming the number as written (numText).
func exactInteger(text string, fail func(string) error) (*big.Int, error) {
	m := numberRE.FindStringSubmatch(text)
	if m == nil {
		return nil, fail(fmt.Sprintf("%q is not a decimal integer", text))
	}
	outside := func() error { return fail(outsideIntegers(text)) }
	mag, ok := magnitude(text, m[1])
	switch {
	case mag == magZero:
		return new(big.Int), nil // 0e-400, 0.0e99, -0: zero
	case mag > 40 && m[1] == "" && !strings.Contains(text, "."):
		if strings.HasPrefix(text, "-") {
			return new(big.Int).Neg(tooLong), nil
		}
		return tooLong, nil
	case !ok && mag > 0:
		return nil, outside()
	case mag <= 0:
		// Below 1 in absolute value and not 0.
		return nil, fail(fmt.Sprintf("%s is not an integer", text))
	case mag > 40:
		// At least 1e40, past 2^128.
		return nil, outside()
	}
	// The number is 0.digits × 10^mag: an integer when every digit past
	// the first mag is 0.
	mant := strings.TrimPrefix(text[:len(text)-len(m[1])], "-")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	whole, rest := digits, ""
	if len(digits) > mag {
		whole, rest = digits[:mag], digits[mag:]
	}
	if strings.Trim(rest, "0") != "" {
		return nil, fail(fmt.Sprintf("%s is not an integer", text))
	}
	v, _ := new(big.Int).SetString(whole+strings.Repeat("0", mag-len(whole)), 10)
	if strings.HasPrefix(text, "-") {
		v.Neg(v)
	}
	if v.BitLen() > 128 {
		return nil, outside()
	}
	return v, nil
}

// tooLong stands for a plain integer of more than 40 digits, outside
// every integer field: exactInteger does not convert its digits.
var tooLong = new(big.Int).Lsh(big.NewInt(1), 200)

// numText is the value v, which exactInteger read from the number node n,
// as a message shows it: as written when it is a plain integer (the
// same digits, and all of them where v is ±tooLong), else v's digits
// (1e30 as 1000000000000000000000000000000).
func numText(n *node, v *big.Int) string {
	if plainIntRE.MatchString(n.text) {
		return n.text
	}
	return v.String()
}

// magZero is magnitude's result for a number whose digits are all 0.
// outsideIntegers says that the number text is outside every integer
// field's range.
func outsideIntegers(text string) string {
	return fmt.Sprintf("%s is outside %d..%d, the range of every integer field", text, int64(math.MinInt64), uint64(math.MaxUint64))
}

const magZero = math.MinInt

// magnitude returns the number of digits before the decimal point of the
// JSON number text (exponent its exponent part, "" if none) written
// without an exponent: 3 for 1.5e2, 0 for 0.5, -2 for 1e-3, magZero
// for zero. ok is false when the exponent does not fit an int, and the
// magnitude's sign is then the exponent's.
func magnitude(text, exponent string) (mag int, ok bool) {
	mant := strings.TrimPrefix(text[:len(text)-len(exponent)], "-")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	lead := len(digits) - len(strings.TrimLeft(digits, "0"))
	if lead == len(digits) {
		return magZero, true
	}
	exp := 0
	if exponent != "" {
		e, err := strconv.Atoi(strings.TrimPrefix(exponent[1:], "+"))
		if err != nil || e > math.MaxInt/4 || e < -math.MaxInt/4 {
			if strings.HasPrefix(exponent[1:], "-") {
				return -1, false
			}
			return 1, false
		}
		exp = e
	}
	return len(intPart) - lead + exp, true
}

func (d *decoder) u64(n *node, field string) (uint64, error) {
	v, err := d.integer(n, field)
	if err != nil {
		return 0, err
	}
	if v.Sign() < 0 || !v.IsUint64() {
		return 0, d.errf(n, field, "%s is outside 0..%d", numText(n, v), uint64(math.MaxUint64))
	}
	return v.Uint64(), nil
}

func (d *decoder) i64(n *node, field string) (int64, error) {
	v, err := d.integer(n, field)
	if err != nil {
		return 0, err
	}
	if !v.IsInt64() {
		return 0, d.errf(n, field, "%s is outside the int64 range", numText(n, v))
	}
	return v.Int64(), nil
}

// f64 returns the value of a number node as a float64. rule says what the
// field allows ("retract must be in [0, 1)"): a value a float64 cannot
// hold is refused with it, since the rule alone would not say what is
// wrong with 1e400 (no float64 is that large) or with 1e-400 in a field
// that must be > 0 (a float64 reads it as 0).
func (d *decoder) f64(n *node, field, rule string) (float64, error) {
	if n.kind != kindNumber {
		return 0, d.errf(n, field, "must be a number, not %s", n.kind)
	}
	f, err := strconv.ParseFloat(n.text, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, d.errf(n, field, "%s is beyond the range of a float64 (about ±1.8e308): %s", n.text, rule)
	}
	if m := numberRE.FindStringSubmatch(n.text); f == 0 && m != nil {
		if mag, _ := magnitude(n.text, m[1]); mag != magZero {
			return 0, d.errf(n, field, "%s is not 0 but too close to 0 for a float64 (the smallest is %g), which would read it as 0: %s", n.text, math.SmallestNonzeroFloat64, rule)
		}
	}
	return f, nil
}

// cmpUnsigned compares the exact value of the JSON number text with b,
// returning -1, 0 or +1, from its digits alone (a float64 rounds
// 0.99999999999999999 to 1, which a bound check on the float would
// misjudge). REQUIRES: text is a JSON number whose exponent fits an int.
func cmpUnsigned(text string, b uint64) int {
	m := numberRE.FindStringSubmatch(text)
	mag, _ := magnitude(text, m[1])
	switch {
	case mag == magZero && b == 0:
		return 0
	case mag == magZero || strings.HasPrefix(text, "-"):
		return -1
	case b == 0:
		return 1
	}
	bs := strconv.FormatUint(b, 10)
	if mag != len(bs) {
		return cmp.Compare(mag, len(bs))
	}
	// Equal magnitudes: compare the significant digits, trailing zeros
	// dropped, as the fractions 0.D of both.
	intPart, frac, _ := strings.Cut(text[:len(text)-len(m[1])], ".")
	digits := strings.TrimRight(strings.TrimLeft(intPart+frac, "0"), "0")
	return strings.Compare(digits, strings.TrimRight(bs, "0"))
}

// members iterates an object-valued field whose member names are names,
// in file order.
func (d *decoder) members(n *node, field string, each func(name string, v *node, f string) error) error {
	if n.kind != kindObject {
		return d.errf(n, field, "must be an object, not %s", n.kind)
	}
	for i, k := range n.keys {
		f := join(field, k)
		d.s.lines[f] = n.vals[i].line
		if msg := CheckName(k); msg != "" {
			return d.errf(n.vals[i], f, "%s", msg)
		}
		if err := each(k, n.vals[i], f); err != nil {
			return err
		}
	}
	return nil
}

// Fields are the members of a spec's top-level object, in the order
// docs/spec.md "Fields" lists them.
var Fields = []string{"version", "name", "description", "as_of", "until", "inputs", "views", "indexes", "query"}

func (d *decoder) spec(root *node) error {
	s := d.s
	if err := d.object(root, "", Fields, []string{"version", "name", "inputs", "query"}); err != nil {
		return err
	}
	v := root.get("version")
	ver, err := d.i64(v, "version")
	if err != nil {
		return err
	}
	if ver != Version {
		return d.errf(v, "version", "unsupported version %d (this benchrun reads version %d)", ver, Version)
	}
	s.Version = int(ver)
	if s.Name, err = d.name(root.get("name"), "name"); err != nil {
		return err
	}
	if n := root.get("description"); n != nil {
		if s.Description, err = d.str(n, "description"); err != nil {
			return err
		}
	}
	// null is the default, 0, as for until (no bound): the fields share
	// one type, an integer or null.
	if n := root.get("as_of"); n != nil && n.kind != kindNull {
		if s.AsOf, err = d.u64(n, "as_of"); err != nil {
			return err
		}
	}
	if n := root.get("until"); n != nil && n.kind != kindNull {
		if s.Until, err = d.u64(n, "until"); err != nil {
			return err
		}
		s.HasUntil = true
		if s.Until <= s.AsOf {
			return d.errf(n, "until", "until %d must be greater than as_of %d", s.Until, s.AsOf)
		}
	}
	if err := d.members(root.get("inputs"), "inputs", d.input); err != nil {
		return err
	}
	if len(s.Inputs) == 0 {
		return d.errf(root.get("inputs"), "inputs", "at least one input is required")
	}
	if n := root.get("views"); n != nil {
		if err := d.members(n, "views", d.view); err != nil {
			return err
		}
	}
	if n := root.get("indexes"); n != nil {
		if err := d.members(n, "indexes", d.index); err != nil {
			return err
		}
	}
	q, err := d.query(root.get("query"), "query")
	if err != nil {
		return err
	}
	s.Query = *q
	return nil
}

func (d *decoder) input(name string, n *node, field string) error {
	if err := d.object(n, field, []string{"columns", "csv", "generate", "rows"}, []string{"columns"}); err != nil {
		return err
	}
	in := Input{Name: name}
	var err error
	cn := n.get("columns")
	if in.Columns, err = d.strings(cn, field+".columns", true); err != nil {
		return err
	}
	if len(in.Columns) == 0 {
		return d.errf(cn, field+".columns", "at least one column is required")
	}
	if err := d.unique(cn, field+".columns", in.Columns, "column"); err != nil {
		return err
	}
	var sources []string
	for _, k := range []string{"csv", "generate", "rows"} {
		if n.get(k) != nil {
			sources = append(sources, k)
		}
	}
	switch len(sources) {
	case 0:
		return d.errf(n, field, "needs a source: one of csv, generate or rows")
	case 1:
	default:
		return d.errf(n, field, "needs exactly one of csv, generate, rows (has %s)", strings.Join(sources, ", "))
	}
	switch sources[0] {
	case "csv":
		in.Source = SourceCSV
		if in.CSV, err = d.str(n.get("csv"), field+".csv"); err != nil {
			return err
		}
		if in.CSV == "" {
			return d.errf(n.get("csv"), field+".csv", "path is empty")
		}
		if strings.ContainsFunc(in.CSV, unicode.IsControl) {
			// No file is named so (a NUL cannot be in a path), and the
			// character would reach the terminal raw in the file's errors.
			return d.errf(n.get("csv"), field+".csv", "path %q has a control character", in.CSV)
		}
	case "generate":
		in.Source = SourceGenerate
		if in.Generate, err = d.generate(n.get("generate"), field+".generate", in.Columns); err != nil {
			return err
		}
	case "rows":
		in.Source = SourceRows
		if in.Rows, err = d.rows(n.get("rows"), field+".rows", in.Columns); err != nil {
			return err
		}
	}
	d.s.Inputs = append(d.s.Inputs, in)
	return nil
}

// unique reports the first repeated entry of list.
func (d *decoder) unique(n *node, field string, list []string, what string) error {
	for i, s := range list {
		for j := 0; j < i; j++ {
			if list[j] == s {
				f := fmt.Sprintf("%s[%d]", field, i)
				return d.errf(n.elems[i], f, "%s %q repeats %s[%d]", what, s, field, j)
			}
		}
	}
	return nil
}

func (d *decoder) generate(n *node, field string, columns []string) (*Generate, error) {
	if err := d.object(n, field, []string{"rows", "seed", "batches", "retract", "columns"}, []string{"rows", "columns"}); err != nil {
		return nil, err
	}
	g := &Generate{Batches: 1}
	var err error
	if g.Rows, err = d.u64(n.get("rows"), field+".rows"); err != nil {
		return nil, err
	}
	if g.Rows > MaxRows {
		return nil, d.errf(n.get("rows"), field+".rows", "%d rows is more than the %d a generated input may have", g.Rows, uint64(MaxRows))
	}
	if x := n.get("seed"); x != nil {
		if g.Seed, err = d.u64(x, field+".seed"); err != nil {
			return nil, err
		}
	}
	if x := n.get("batches"); x != nil {
		if g.Batches, err = d.u64(x, field+".batches"); err != nil {
			return nil, err
		}
		if g.Batches == 0 {
			return nil, d.errf(x, field+".batches", "must be at least 1")
		}
	}
	if x := n.get("retract"); x != nil {
		if g.Retract, err = d.f64(x, field+".retract", "retract must be in [0, 1) (0 for none)"); err != nil {
			return nil, err
		}
		if g.Retract == 1 && cmpUnsigned(x.text, 1) < 0 {
			return nil, d.errf(x, field+".retract", "%s is below 1, but a float64 reads it as 1, outside [0, 1)", x.text)
		}
		if !(g.Retract >= 0 && g.Retract < 1) {
			return nil, d.errf(x, field+".retract", "%s is outside [0, 1)", x.text)
		}
	}
	cn := n.get("columns")
	cf := field + ".columns"
	if cn.kind != kindObject {
		return nil, d.errf(cn, cf, "must be an object, not %s", cn.kind)
	}
	for i, k := range cn.keys {
		d.s.lines[join(cf, k)] = cn.vals[i].line
		if !contains(columns, k) {
			return nil, d.errf(cn.vals[i], join(cf, k), "not a column of the input (columns: %s)", strings.Join(columns, ", "))
		}
	}
	for _, c := range columns {
		x := cn.get(c)
		if x == nil {
			return nil, d.errf(cn, join(cf, c), "column has no distribution")
		}
		cg, err := d.column(x, join(cf, c))
		if err != nil {
			return nil, err
		}
		cg.Column = c
		g.Columns = append(g.Columns, cg)
	}
	return g, nil
}

func (d *decoder) column(n *node, field string) (ColumnGen, error) {
	var c ColumnGen
	if n.kind != kindObject {
		return c, d.errf(n, field, "must be an object, not %s", n.kind)
	}
	dn := n.get("dist")
	if dn == nil {
		return c, d.errf(n, field+".dist", "required field is missing")
	}
	dist, err := d.str(dn, field+".dist")
	if err != nil {
		return c, err
	}
	var err2 error
	switch dist {
	case "seq":
		c.Dist = DistSeq
		err2 = d.object(n, field, []string{"dist"}, nil)
	case "uniform":
		c.Dist = DistUniform
		if err2 = d.object(n, field, []string{"dist", "min", "max"}, []string{"min", "max"}); err2 != nil {
			break
		}
		if c.Min, err2 = d.i64(n.get("min"), field+".min"); err2 != nil {
			break
		}
		if c.Max, err2 = d.i64(n.get("max"), field+".max"); err2 != nil {
			break
		}
		if c.Min > c.Max {
			err2 = d.errf(n.get("max"), field+".max", "max %d is below min %d", c.Max, c.Min)
		}
	case "zipf":
		c.Dist = DistZipf
		if err2 = d.object(n, field, []string{"dist", "n", "s"}, []string{"n", "s"}); err2 != nil {
			break
		}
		if c.N, err2 = d.u64(n.get("n"), field+".n"); err2 != nil {
			break
		}
		if c.N == 0 || c.N > MaxZipfN {
			err2 = d.errf(n.get("n"), field+".n", "n must be in 1..%d", MaxZipfN)
			break
		}
		if c.S, err2 = d.f64(n.get("s"), field+".s", "s must be > 0 (and at most 100)"); err2 != nil {
			break
		}
		if c.S == 100 && cmpUnsigned(n.get("s").text, 100) > 0 {
			err2 = d.errf(n.get("s"), field+".s", "s %s is above 100 (a float64 reads it as 100): s must be > 0 (and at most 100)", n.get("s").text)
			break
		}
		if !(c.S > 0) || c.S > 100 {
			err2 = d.errf(n.get("s"), field+".s", "s %s must be > 0 (and at most 100)", n.get("s").text)
		}
	default:
		return c, d.errf(dn, field+".dist", "unknown distribution %q (seq, uniform or zipf)", dist)
	}
	return c, err2
}

// MaxRows bounds a generated input's rows. A run holds a few hundred bytes
// per update (10 million rows of the lookup workload peak at 3 GB), so
// MaxRows updates already need tens of GB; far larger counts would only
// end in the runtime's out-of-memory crash.
const MaxRows = 100_000_000

// MaxZipfN bounds a zipf column's n: the sampler keeps a table of n
// cumulative weights (8 bytes each, 128 MiB at the bound).
const MaxZipfN = 1 << 24

// rows reads inline rows [[time, diff, c1, ...], ...] under the CSV rules.
func (d *decoder) rows(n *node, field string, columns []string) (*Table, error) {
	if n.kind != kindArray {
		return nil, d.errf(n, field, "must be an array of [time, diff, %s] rows, not %s", strings.Join(columns, ", "), n.kind)
	}
	t := NewTable(columns, len(n.elems))
	row := make([]int64, len(columns))
	for i, r := range n.elems {
		f := fmt.Sprintf("%s[%d]", field, i)
		d.s.lines[f] = r.line
		if r.kind != kindArray || len(r.elems) != 2+len(columns) {
			return nil, d.errf(r, f, "must be an array of %d integers: time, diff, %s", 2+len(columns), strings.Join(columns, ", "))
		}
		v, err := d.rowInteger(r.elems[0], f+"[0]")
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(r.elems[0].text, "-") && v.Sign() == 0 {
			// As a CSV line's time field, which takes no sign.
			return nil, d.errf(r.elems[0], f+"[0]", "time %s is not a decimal integer in 0..%d (a time takes no sign)", r.elems[0].text, MaxTime)
		}
		if v.Sign() < 0 || !v.IsUint64() || v.Uint64() > MaxTime {
			return nil, d.errf(r.elems[0], f+"[0]", "time %s is outside 0..%d (%s)", numText(r.elems[0], v), MaxTime, maxTimeWhy)
		}
		tm := v.Uint64()
		diff, err := d.rowI64(r.elems[1], f+"[1]")
		if err != nil {
			return nil, err
		}
		if diff == 0 {
			return nil, d.errf(r.elems[1], f+"[1]", "diff must not be 0")
		}
		for j := range columns {
			if row[j], err = d.rowI64(r.elems[2+j], fmt.Sprintf("%s[%d]", f, 2+j)); err != nil {
				return nil, err
			}
		}
		t.Append(tm, diff, row)
	}
	return t, nil
}

// plainIntRE is a CSV field's integer: an optional '-' and digits.
var plainIntRE = regexp.MustCompile(`^-?[0-9]+$`)

// rowInteger is integer for a value of an inline row, which follows the
// CSV rules: an optional '-' and decimal digits, no exponent or fraction.
func (d *decoder) rowInteger(n *node, field string) (*big.Int, error) {
	if n.kind == kindNumber && !plainIntRE.MatchString(n.text) {
		return nil, d.errf(n, field, "%s is not a plain decimal integer (inline rows follow the CSV rules: no exponent or fraction)", n.text)
	}
	return d.integer(n, field)
}

// rowI64 is i64 under the rules of rowInteger.
func (d *decoder) rowI64(n *node, field string) (int64, error) {
	v, err := d.rowInteger(n, field)
	if err != nil {
		return 0, err
	}
	if !v.IsInt64() {
		return 0, d.errf(n, field, "%s is outside the int64 range", numText(n, v))
	}
	return v.Int64(), nil
}

func (d *decoder) view(name string, n *node, field string) error {
	if n.kind != kindObject {
		return d.errf(n, field, "must be an object, not %s", n.kind)
	}
	v := View{Name: name}
	if n.get("query") != nil {
		for i, k := range n.keys {
			if k != "query" {
				return d.errf(n.vals[i], join(field, k), "unknown field in a query view (a query view has only \"query\"; a simple view has input, map, filter)")
			}
		}
		q, err := d.query(n.get("query"), field+".query")
		if err != nil {
			return err
		}
		v.Query = q
	} else {
		if err := d.object(n, field, []string{"input", "map", "filter"}, []string{"input"}); err != nil {
			return err
		}
		var err error
		if v.Input, err = d.name(n.get("input"), field+".input"); err != nil {
			return err
		}
		if x := n.get("map"); x != nil {
			if v.Map, err = d.maps(x, field+".map"); err != nil {
				return err
			}
		}
		if x := n.get("filter"); x != nil {
			if v.Filter, err = d.strings(x, field+".filter", false); err != nil {
				return err
			}
		}
	}
	d.s.Views = append(d.s.Views, v)
	return nil
}

func (d *decoder) maps(n *node, field string) ([]Map, error) {
	if n.kind != kindArray {
		return nil, d.errf(n, field, "must be an array, not %s", n.kind)
	}
	var out []Map
	for i, e := range n.elems {
		f := fmt.Sprintf("%s[%d]", field, i)
		d.s.lines[f] = e.line
		if err := d.object(e, f, []string{"name", "expr"}, []string{"name", "expr"}); err != nil {
			return nil, err
		}
		var m Map
		var err error
		if m.Name, err = d.name(e.get("name"), f+".name"); err != nil {
			return nil, err
		}
		if m.Expr, err = d.str(e.get("expr"), f+".expr"); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func (d *decoder) index(name string, n *node, field string) error {
	if err := d.object(n, field, []string{"on", "key"}, []string{"on", "key"}); err != nil {
		return err
	}
	ix := Index{Name: name}
	var err error
	if ix.On, err = d.name(n.get("on"), field+".on"); err != nil {
		return err
	}
	if ix.Key, err = d.strings(n.get("key"), field+".key", true); err != nil {
		return err
	}
	if err := d.unique(n.get("key"), field+".key", ix.Key, "key column"); err != nil {
		return err
	}
	d.s.Indexes = append(d.s.Indexes, ix)
	return nil
}

func (d *decoder) query(n *node, field string) (*Query, error) {
	if err := d.object(n, field, []string{"from", "join", "on", "map", "filter", "project", "reduce", "distinct", "threshold"}, []string{"from"}); err != nil {
		return nil, err
	}
	q := &Query{Join: JoinLinear}
	fn := n.get("from")
	ff := field + ".from"
	if fn.kind != kindArray {
		return nil, d.errf(fn, ff, "must be an array, not %s", fn.kind)
	}
	if len(fn.elems) == 0 {
		return nil, d.errf(fn, ff, "at least one entry is required")
	}
	for i, e := range fn.elems {
		f := fmt.Sprintf("%s[%d]", ff, i)
		d.s.lines[f] = e.line
		if err := d.object(e, f, []string{"as", "collection"}, []string{"as", "collection"}); err != nil {
			return nil, err
		}
		var fr From
		var err error
		if fr.As, err = d.name(e.get("as"), f+".as"); err != nil {
			return nil, err
		}
		if fr.Collection, err = d.name(e.get("collection"), f+".collection"); err != nil {
			return nil, err
		}
		for j, prev := range q.From {
			if prev.As == fr.As {
				return nil, d.errf(e.get("as"), f+".as", "alias %q repeats %s[%d].as", fr.As, ff, j)
			}
		}
		q.From = append(q.From, fr)
	}
	var err error
	if x := n.get("join"); x != nil {
		if q.Join, err = d.str(x, field+".join"); err != nil {
			return nil, err
		}
		if q.Join != JoinLinear && q.Join != JoinDelta {
			return nil, d.errf(x, field+".join", "unknown join %q (linear or delta)", q.Join)
		}
	}
	if x := n.get("on"); x != nil {
		if x.kind != kindArray {
			return nil, d.errf(x, field+".on", "must be an array of arrays of refs, not %s", x.kind)
		}
		for i, e := range x.elems {
			f := fmt.Sprintf("%s.on[%d]", field, i)
			d.s.lines[f] = e.line
			class, err := d.strings(e, f, false)
			if err != nil {
				return nil, err
			}
			q.On = append(q.On, class)
		}
	}
	if x := n.get("map"); x != nil {
		if q.Map, err = d.maps(x, field+".map"); err != nil {
			return nil, err
		}
	}
	if x := n.get("filter"); x != nil {
		if q.Filter, err = d.strings(x, field+".filter", false); err != nil {
			return nil, err
		}
	}
	if x := n.get("project"); x != nil {
		if q.Project, err = d.strings(x, field+".project", false); err != nil {
			return nil, err
		}
		q.HasProject = true
	}
	if x := n.get("reduce"); x != nil {
		if q.Reduce, err = d.reduce(x, field+".reduce"); err != nil {
			return nil, err
		}
	}
	if x := n.get("distinct"); x != nil {
		if q.Distinct, err = d.boolean(x, field+".distinct"); err != nil {
			return nil, err
		}
	}
	if x := n.get("threshold"); x != nil {
		if q.Threshold, err = d.boolean(x, field+".threshold"); err != nil {
			return nil, err
		}
	}
	if q.Distinct && q.Threshold {
		return nil, d.errf(n.get("threshold"), field+".threshold", "at most one of distinct and threshold may be true")
	}
	return q, nil
}

func (d *decoder) reduce(n *node, field string) (*Reduce, error) {
	if err := d.object(n, field, []string{"group_by", "aggregates"}, []string{"group_by", "aggregates"}); err != nil {
		return nil, err
	}
	r := &Reduce{}
	var err error
	if r.GroupBy, err = d.strings(n.get("group_by"), field+".group_by", false); err != nil {
		return nil, err
	}
	an := n.get("aggregates")
	af := field + ".aggregates"
	if an.kind != kindArray {
		return nil, d.errf(an, af, "must be an array, not %s", an.kind)
	}
	if len(an.elems) == 0 {
		return nil, d.errf(an, af, "at least one aggregate is required")
	}
	for i, e := range an.elems {
		f := fmt.Sprintf("%s[%d]", af, i)
		d.s.lines[f] = e.line
		if err := d.object(e, f, []string{"name", "fn", "expr"}, []string{"name", "fn"}); err != nil {
			return nil, err
		}
		var a Aggregate
		if a.Name, err = d.name(e.get("name"), f+".name"); err != nil {
			return nil, err
		}
		if a.Fn, err = d.str(e.get("fn"), f+".fn"); err != nil {
			return nil, err
		}
		switch a.Fn {
		case FnCount:
			if x := e.get("expr"); x != nil {
				return nil, d.errf(x, f+".expr", "count takes no expr")
			}
		case FnSum, FnMin, FnMax:
			x := e.get("expr")
			if x == nil {
				return nil, d.errf(e, f+".expr", "%s requires an expr", a.Fn)
			}
			if a.Expr, err = d.str(x, f+".expr"); err != nil {
				return nil, err
			}
		default:
			return nil, d.errf(e.get("fn"), f+".fn", "unknown aggregate %q (count, sum, min or max)", a.Fn)
		}
		r.Aggregates = append(r.Aggregates, a)
	}
	return r, nil
}
