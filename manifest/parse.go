package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
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
	if err := checkStructure(data); err != nil {
		return nil, err
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, &ValidationError{Reason: "not a JSON object", Err: err}
	}
	if head.APIVersion != APIVersion {
		return nil, invalid("apiVersion", "%q is not a known version (want %q)", head.APIVersion, APIVersion)
	}
	if head.Kind != Kind {
		return nil, invalid("kind", "%q is not %q", head.Kind, Kind)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		if fe := fieldError(data); fe != nil {
			return nil, fe
		}
		return nil, decodeError(err)
	}
	if err := Validate(&m); err != nil {
		return nil, err
	}
	return &m, nil
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

// checkStructure walks the tokens of data and refuses duplicate object keys,
// excessive nesting and anything after the top-level value.
func checkStructure(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]bool
		path   string
		index  int
		expect bool // in an object: the next string token is a key
	}
	var stack []*frame
	path := func() string {
		if len(stack) == 0 {
			return ""
		}
		return stack[len(stack)-1].path
	}
	child := func(key string) string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.object {
			if top.path == "" {
				return key
			}
			return top.path + "." + key
		}
		return top.path + "[" + strconv.Itoa(top.index) + "]"
	}
	var lastKey string
	afterValue := func() {
		if len(stack) == 0 {
			return
		}
		top := stack[len(stack)-1]
		if top.object {
			top.expect = true
		} else {
			top.index++
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if len(stack) != 0 {
				return invalid("", "unexpected end of document")
			}
			return invalid("", "empty document")
		}
		if err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return &ValidationError{Field: path(), Reason: fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se), Err: err}
			}
			return &ValidationError{Field: path(), Reason: "malformed JSON", Err: err}
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expect {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				afterValue()
				if len(stack) == 0 {
					break
				}
				continue
			}
			key, _ := tok.(string)
			if top.keys[key] {
				return invalid(child(key), "duplicate key")
			}
			if err := checkKey(child(key), key); err != nil {
				return err
			}
			top.keys[key] = true
			top.expect = false
			lastKey = key
			continue
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) >= maxDepth {
					return invalid(path(), "nested deeper than %d", maxDepth)
				}
				p := child(lastKey)
				stack = append(stack, &frame{object: t == '{', keys: map[string]bool{}, path: p, expect: t == '{'})
			case ']':
				stack = stack[:len(stack)-1]
				afterValue()
			}
		default:
			afterValue()
		}
		if len(stack) == 0 {
			break
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("", "trailing data after the manifest")
	}
	return nil
}
