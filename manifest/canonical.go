package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"
)

// errNotFast sends Canonicalize to its general path.
var errNotFast = errors.New("not for the fast path")

// canonicalFast is Canonicalize without decoding into any: it copies the
// document, sorting each object's members by key, byte for byte as
// encoding/json sorts a map's keys. It copies numbers as written (as
// UseNumber does) and strings that encoding/json would re-encode the same
// (valid UTF-8, no escape, no U+2028 or U+2029); a string with an escape is
// decoded and re-encoded. For invalid JSON, trailing data or a duplicate
// key it returns errNotFast and Canonicalize takes the general path, whose
// result (or error) it is.
func canonicalFast(data []byte) ([]byte, error) {
	if !json.Valid(data) {
		return nil, errNotFast
	}
	return canonicalizer{in: data}.run()
}

// canonicalEncoded is Canonicalize of encoding/json's own output (marshal
// of a Go value): valid JSON, whose strings without an escape are valid
// UTF-8 with no U+2028 or U+2029 (the encoder escapes those, and writes an
// invalid byte as \ufffd), so neither the syntax check nor those string
// checks need repeating; its result is canonicalFast's, and its fallback
// too.
func canonicalEncoded(data []byte) ([]byte, error) {
	out, err := canonicalizer{in: data, encoded: true}.run()
	if err == nil {
		return out, nil
	}
	return canonicalizeAny(data)
}

// run copies c.in, canonical, to a new slice.
func (c canonicalizer) run() ([]byte, error) {
	c.out = make([]byte, 0, len(c.in))
	c.skipSpace()
	if err := c.value(); err != nil {
		return nil, err
	}
	if c.skipSpace(); c.i != len(c.in) {
		return nil, errNotFast
	}
	return c.out, nil
}

type canonicalizer struct {
	in  []byte
	i   int
	out []byte
	// encoded says that in is encoding/json's output (canonicalEncoded).
	encoded bool
	// members is a stack of the members of the objects being copied.
	members []member
	// body holds an object's members while they are put in order.
	body []byte
}

func (c *canonicalizer) skipSpace() {
	for c.i < len(c.in) {
		switch c.in[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// value copies the value at c.i; the document is valid JSON.
func (c *canonicalizer) value() error {
	switch c.in[c.i] {
	case '{':
		return c.object()
	case '[':
		c.i++
		c.out = append(c.out, '[')
		c.skipSpace()
		if c.in[c.i] == ']' {
			c.i++
			c.out = append(c.out, ']')
			return nil
		}
		for {
			c.skipSpace()
			if err := c.value(); err != nil {
				return err
			}
			c.skipSpace()
			b := c.in[c.i]
			c.i++
			c.out = append(c.out, b)
			if b == ']' {
				return nil
			}
		}
	case '"':
		s, err := c.str()
		if err != nil {
			return err
		}
		c.out = append(c.out, s...)
		return nil
	default: // a number, true, false or null: as written
		start := c.i
		for c.i < len(c.in) && !strings.ContainsRune(",]} \t\n\r", rune(c.in[c.i])) {
			c.i++
		}
		c.out = append(c.out, c.in[start:c.i]...)
		return nil
	}
}

// member is one object member already copied to out[start:end].
type member struct {
	key        []byte
	start, end int
}

func (c *canonicalizer) object() error {
	c.i++
	open := len(c.out)
	c.out = append(c.out, '{')
	base := len(c.members)
	defer func() { c.members = c.members[:base] }()
	c.skipSpace()
	if c.in[c.i] == '}' {
		c.i++
		c.out = append(c.out, '}')
		return nil
	}
	for {
		c.skipSpace()
		start, from := len(c.out), c.i
		raw, err := c.str()
		if err != nil {
			return err
		}
		key := c.in[from+1 : c.i-1]
		if bytes.IndexByte(key, '\\') >= 0 || !c.encoded && !utf8.Valid(key) {
			var k string
			if err := json.Unmarshal(c.in[from:c.i], &k); err != nil {
				return err
			}
			key = []byte(k)
		}
		c.out = append(c.out, raw...)
		c.skipSpace()
		c.i++ // ':'
		c.out = append(c.out, ':')
		c.skipSpace()
		if err := c.value(); err != nil {
			return err
		}
		c.members = append(c.members, member{key, start, len(c.out)})
		c.skipSpace()
		b := c.in[c.i]
		c.i++
		if b == '}' {
			break
		}
		c.out = append(c.out, ',')
	}
	members := c.members[base:]
	cmp := func(a, b member) int { return bytes.Compare(a.key, b.key) }
	if slices.IsSortedFunc(members, cmp) {
		for i := 1; i < len(members); i++ {
			if bytes.Equal(members[i].key, members[i-1].key) {
				return errNotFast
			}
		}
		c.out = append(c.out, '}')
		return nil
	}
	// No object is copied while body is in use: it is reused.
	c.body = append(c.body[:0], c.out[open+1:]...)
	body := c.body
	slices.SortFunc(members, cmp)
	c.out = append(c.out[:open], '{')
	for i, m := range members {
		if i > 0 {
			if bytes.Equal(m.key, members[i-1].key) {
				return errNotFast
			}
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, body[m.start-open-1:m.end-open-1]...)
	}
	c.out = append(c.out, '}')
	return nil
}

// str returns the string token at c.i in the form encoding/json would
// encode it.
func (c *canonicalizer) str() ([]byte, error) {
	start := c.i
	c.i++
	escaped := false
	// The closing quote is the next one unless a backslash comes first.
	if q := bytes.IndexByte(c.in[c.i:], '"'); q >= 0 && bytes.IndexByte(c.in[c.i:c.i+q], '\\') < 0 {
		c.i += q
	} else {
		for c.in[c.i] != '"' {
			if c.in[c.i] == '\\' {
				escaped = true
				c.i++
			}
			c.i++
		}
	}
	c.i++
	tok := c.in[start:c.i]
	if !escaped && c.encoded {
		return tok, nil
	}
	if !escaped && utf8.Valid(tok) && !bytes.Contains(tok, []byte("\u2028")) && !bytes.Contains(tok, []byte("\u2029")) {
		return tok, nil
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return nil, err
	}
	return marshal(s)
}
