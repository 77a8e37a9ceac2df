package manifest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Two gaps of encoding/json that Parse closes here:
//   - it matches object keys case-insensitively, so {"kind": …, "Kind": …}
//     passes a duplicate-key check and the second spelling silently wins:
//     checkKey refuses a key that is another spelling of a known one, on
//     every parse, for the price of a map lookup a key;
//   - its errors name an unknown field by its key alone ("extra", not
//     "images[0].extra") and a malformed digest not at all: fieldError,
//     run only once decoding has failed, walks the document beside the
//     Manifest type and names the full path.

var (
	manifestType = reflect.TypeFor[Manifest]()
	digestType   = reflect.TypeFor[Digest]()
)

// knownKeys maps the lower-case form of every JSON key of the manifest's
// types to its one accepted spelling.
var knownKeys = func() map[string]string {
	keys := map[string]string{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || t == digestType {
			return
		}
		seen[t] = true
		for name, ft := range jsonFields(t) {
			keys[strings.ToLower(name)] = name
			walk(ft)
		}
	}
	walk(manifestType)
	return keys
}()

// checkKey refuses a key that is a spelling, in another case, of a key of
// the format. Unknown keys are left to the decoder.
func checkKey(path func() string, key []byte) error {
	lower := true // ASCII and no upper case: its own lower case, no copy
	for _, c := range key {
		if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			lower = false
			break
		}
	}
	var want string
	var ok bool
	if lower {
		want, ok = knownKeys[string(key)]
	} else {
		want, ok = knownKeys[strings.ToLower(string(key))]
	}
	if ok && want != string(key) {
		return invalid(path(), "unknown field (keys are case-sensitive: %q)", want)
	}
	return nil
}

// fieldError walks data beside the Manifest type and returns the first
// key that is no field at its place, or digest that does not parse, naming
// its full path; nil when it finds neither.
func fieldError(data []byte) *ValidationError {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*fieldFrame
	child := func(f *fieldFrame) string {
		if f.object {
			if f.path == "" {
				return f.key
			}
			return f.path + "." + f.key
		}
		return f.path + "[" + strconv.Itoa(f.index) + "]"
	}
	next := func() { // a value ended
		if n := len(stack); n > 0 {
			if top := stack[n-1]; top.object {
				top.wantKey = true
			} else {
				top.index++
			}
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var top *fieldFrame
		if n := len(stack); n > 0 {
			top = stack[n-1]
		}
		if top != nil && top.object && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				next()
				continue
			}
			top.key, _ = tok.(string)
			top.wantKey = false
			if top.typ != nil && top.typ.Kind() == reflect.Struct {
				ft, ok := jsonFields(top.typ)[top.key]
				if !ok {
					return invalid(child(top), "unknown field")
				}
				top.keyType = ft
			}
			continue
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				f := &fieldFrame{object: t == '{', wantKey: t == '{', typ: manifestType}
				if top != nil {
					f.path, f.typ = child(top), elemType(top)
				}
				stack = append(stack, f)
				continue
			}
			stack = stack[:len(stack)-1]
			next()
		case string:
			if top != nil && top.object && top.keyType == digestType {
				if _, err := ParseDigest(t); err != nil {
					return &ValidationError{Field: child(top), Reason: err.Error(), Err: err}
				}
			}
			next()
		default:
			next()
		}
	}
}

// fieldFrame is one open object or array in fieldError.
type fieldFrame struct {
	object  bool
	path    string
	index   int
	typ     reflect.Type // the Go type it decodes into; nil: not checked
	key     string       // in an object, the current key
	keyType reflect.Type // and the type of its value
	wantKey bool
}

// elemType is the Go type of the value that starts at top's current key
// or element, nil where it is not known.
func elemType(top *fieldFrame) reflect.Type {
	var t reflect.Type
	switch {
	case top.typ == nil:
		return nil
	case top.object && top.typ.Kind() == reflect.Struct:
		t = top.keyType
	case !top.object && (top.typ.Kind() == reflect.Slice || top.typ.Kind() == reflect.Array):
		t = top.typ.Elem()
	default:
		return nil
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields returns the JSON keys of struct type t with their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		m[name] = f.Type
	}
	fieldCache.Store(t, m)
	return m
}
