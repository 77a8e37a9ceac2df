package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
)

// maxDepth bounds the nesting of a manifest document.
const maxDepth = 32

// Parse decodes and validates a manifest strictly. Every error it returns
// is a *ValidationError: a document over MaxSize, malformed JSON, a
// duplicate key, an unknown field, trailing data, an unknown apiVersion or
// kind, or a field that Validate refuses.
func Parse(data []byte) (*Manifest, error) {
	if len(data) > MaxSize {
		return nil, invalid("", "document is %d bytes, over the %d byte limit", len(data), MaxSize)
	}
	// One pass: encoding/json/v2's rules are the strict ones (see
	// decodeStrict). A document they refuse takes decodeV1, which accepts
	// and refuses exactly as Parse did before and says why in its words;
	// FuzzParseAgrees holds the two to the same Manifest.
	m, err := decodeStrict(data)
	if err != nil {
		if m, err = decodeV1(data); err != nil {
			return nil, err
		}
	}
	if err := checkVersion(m.APIVersion, m.Kind); err != nil {
		return nil, err
	}
	if err := Validate(m); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeStrict decodes data in one pass with encoding/json/v2's semantics
// (github.com/go-json-experiment/json, the standard library's from Go
// 1.27) and unknown members refused: names match case-sensitively, a
// duplicate name at any depth is an error, and so are invalid UTF-8 (a
// lone surrogate escape included), data after the value, and a time that
// is not strict RFC 3339. Everything it accepts, decodeV1 accepts too
// (checkText, checkKeys: the Manifest type nests far less deep than
// maxDepth and has no free-form member), with the same Manifest; it
// refuses a few documents that decodeV1 accepts (a zone offset of +24:00,
// a comma before a time's fraction), which Parse then takes there.
func decodeStrict(data []byte) (*Manifest, error) {
	var m Manifest
	if err := jsonv2.Unmarshal(data, &m, jsonv2.RejectUnknownMembers(true)); err != nil {
		return nil, err
	}
	return &m, nil
}

// decodeV1 decodes data with encoding/json and lockstep's own checks of the
// bytes, in the order of precedence of their errors.
func decodeV1(data []byte) (*Manifest, error) {
	// One decode. A document that decodes whole, with nothing but white
	// space after it, is what json.Valid accepts, so the structure pass
	// need not scan it again; and its apiVersion and kind are in m, as the
	// head would read them (duplicate keys are refused by the pass). A
	// document that does not decode takes the checks in their order of
	// precedence (parseError), so its error is the same as ever.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil || len(bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")) > 0 {
		return nil, parseError(data, err)
	}
	if err := checkText(data); err != nil {
		return nil, &ValidationError{Reason: err.Error()}
	}
	if err := checkKeys(data); err != nil {
		return nil, err
	}
	return &m, nil
}

// parseError is the error of a document that did not decode whole (err
// from the decoder, nil when data followed the value): the structure's,
// the version's, a field's, or the decoder's, in that order.
func parseError(data []byte, err error) error {
	if serr := checkStructure(data); serr != nil {
		return serr
	}
	if herr := checkHead(data); herr != nil {
		return herr
	}
	if fe := fieldError(data); fe != nil {
		return fe
	}
	if err == nil {
		return &ValidationError{Reason: "trailing data after the manifest"}
	}
	return decodeError(err)
}

// checkHead reads the apiVersion and kind alone and checks them.
func checkHead(data []byte) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return &ValidationError{Reason: "not a JSON object", Err: err}
	}
	return checkVersion(head.APIVersion, head.Kind)
}

func checkVersion(apiVersion, kind string) error {
	if versionRank(apiVersion) == 0 {
		return invalid("apiVersion", "%q is not a known version (want one of %s)", apiVersion, strings.Join(quoted(Versions), ", "))
	}
	if kind != Kind {
		return invalid("kind", "%q is not %q", kind, Kind)
	}
	return nil
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// Read reads at most MaxSize bytes from r and parses them. A longer input
// is an error, as from Parse.
func Read(r io.Reader) (*Manifest, []byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("reading manifest: %w", err)
	}
	m, err := Parse(data)
	if err != nil {
		return nil, nil, err
	}
	return m, data, nil
}

// decodeError turns an encoding/json error into a ValidationError that
// names the field.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return &ValidationError{Field: te.Field, Reason: fmt.Sprintf("want %s, got JSON %s", te.Type, te.Value), Err: err}
	case errors.As(err, &se):
		return &ValidationError{Reason: fmt.Sprintf("malformed JSON at byte %d", se.Offset), Err: err}
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return &ValidationError{Field: strings.Trim(f, `"`), Reason: "unknown field", Err: err}
	}
	// Errors from UnmarshalText (digests) carry no field name from
	// encoding/json in all versions; keep the message.
	return &ValidationError{Reason: strings.TrimPrefix(msg, "json: "), Err: err}
}

// checkStructure refuses what encoding/json lets through: duplicate object
// keys (at any depth), nesting deeper than maxDepth, and anything after the
// top-level value. It validates the syntax with json.Valid first, then
// makes one pass over the bytes, so that a manifest of 100,000 assets is
// checked in milliseconds.
func checkStructure(data []byte) error {
	if err := checkText(data); err != nil {
		return &ValidationError{Reason: err.Error()}
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			if strings.Contains(se.Error(), "after top-level value") {
				return &ValidationError{Reason: "trailing data after the manifest", Err: err}
			}
			return &ValidationError{Reason: fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se), Err: err}
		}
		return &ValidationError{Reason: "malformed JSON", Err: err}
	}
	return checkKeys(data)
}

// checkKeys is checkStructure's pass over the bytes of a document that is
// valid JSON: depth, duplicate keys, keys in another case.
func checkKeys(data []byte) error {
	// An object's keys are slices of data (decoded only when escaped),
	// compared one by one up to smallObject keys and in a map past that;
	// a popped frame's slices are reused. The path is built only for an
	// error.
	const smallObject = 16
	type frame struct {
		object bool
		key    []byte
		index  int
		keys   [][]byte
		many   map[string]struct{}
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			switch {
			case f.object && len(f.key) > 0:
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.Write(f.key)
			case !f.object:
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
			}
		}
		return b.String()
	}
	expectKey := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '{', '[':
			if len(stack) >= maxDepth {
				return invalid(path(), "nested deeper than %d", maxDepth)
			}
			if n := len(stack); n < cap(stack) {
				stack = stack[:n+1]
				stack[n] = frame{object: c == '{', keys: stack[n].keys[:0]}
			} else {
				stack = append(stack, frame{object: c == '{'})
			}
			expectKey = c == '{'
		case '}', ']':
			stack = stack[:len(stack)-1]
			expectKey = false
		case ',':
			if top := &stack[len(stack)-1]; top.object {
				expectKey = true
			} else {
				top.index++
			}
		case '"':
			end := i + 1
			escaped := false
			for ; data[end] != '"'; end++ {
				if data[end] == '\\' {
					escaped = true
					end++
				}
			}
			if expectKey {
				key := data[i+1 : end]
				if escaped {
					var k string
					if err := json.Unmarshal(data[i:end+1], &k); err != nil {
						return &ValidationError{Field: path(), Reason: "malformed key", Err: err}
					}
					key = []byte(k)
				}
				top := &stack[len(stack)-1]
				top.key = key
				dup := false
				if top.many != nil {
					_, dup = top.many[string(key)]
				} else {
					for _, k := range top.keys {
						if bytes.Equal(k, key) {
							dup = true
							break
						}
					}
				}
				if dup {
					return invalid(path(), "duplicate key")
				}
				if err := checkKey(path, key); err != nil {
					return err
				}
				switch {
				case top.many != nil:
					top.many[string(key)] = struct{}{}
				case len(top.keys) < smallObject:
					top.keys = append(top.keys, key)
				default:
					top.many = make(map[string]struct{}, 2*smallObject)
					for _, k := range top.keys {
						top.many[string(k)] = struct{}{}
					}
					top.many[string(key)] = struct{}{}
				}
				expectKey = false
			}
			i = end
		}
	}
	return nil
}

// checkText refuses what encoding/json would silently replace with U+FFFD:
// bytes that are not valid UTF-8, and \u escapes of a lone surrogate (a
// high one not followed by a low one, or a low one alone). Every
// backslash of a valid JSON document is in a string, so one pass over the
// bytes finds every escape.
func checkText(data []byte) error {
	if !utf8.Valid(data) {
		return errors.New("not valid UTF-8")
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' || i+1 >= len(data) {
			continue
		}
		i++ // the escaped character
		if data[i] != 'u' {
			continue
		}
		r, ok := hex4(data, i+1)
		if !ok {
			continue // json.Valid reports it
		}
		i += 4
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return fmt.Errorf("a lone surrogate \\u%04x in a string", r)
		case r >= 0xd800 && r <= 0xdbff:
			lo, ok := rune(0), i+2 < len(data) && data[i+1] == '\\' && data[i+2] == 'u'
			if ok {
				lo, ok = hex4(data, i+3)
			}
			if !ok || lo < 0xdc00 || lo > 0xdfff {
				return fmt.Errorf("a lone surrogate \\u%04x in a string", r)
			}
			i += 6
		}
	}
	return nil
}

// hex4 decodes the four hex digits at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(data[i:i+4]), 16, 32)
	return rune(n), err == nil
}
