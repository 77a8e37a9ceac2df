package rewrite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ecsRefs finds containerDefinitions[].image in an ECS task definition,
// at the top level or under taskDefinition.
func ecsRefs(data []byte) ([]ref, error) {
	var refs []ref
	found := false
	w := &jsonWalker{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	w.dec.UseNumber()
	err := w.value(nil, func(path []string, start, end int, s string) {
		p := path
		if len(p) > 0 && p[0] == "taskDefinition" {
			p = p[1:]
		}
		if len(p) == 3 && p[0] == "containerDefinitions" && p[2] == "image" {
			refs = append(refs, ref{value: s, start: start, end: end, line: 1 + bytes.Count(data[:start], []byte("\n")), quote: '"'})
		}
	}, func(path []string) {
		p := path
		if len(p) > 0 && p[0] == "taskDefinition" {
			p = p[1:]
		}
		if len(p) == 1 && p[0] == "containerDefinitions" {
			found = true
		}
	})
	if err != nil {
		return nil, w.lineError(err)
	}
	if _, err := w.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, w.lineError(errors.New("data after the top-level value"))
	}
	if !found {
		return nil, errors.New("no containerDefinitions: not an ECS task definition")
	}
	return refs, nil
}

// jsonWalker walks a JSON document by tokens, keeping byte offsets.
type jsonWalker struct {
	dec  *json.Decoder
	data []byte
}

// value reads one value at path, calling str for every string value and
// container for every object or array.
func (w *jsonWalker) value(path []string, str func(path []string, start, end int, s string), container func(path []string)) error {
	before := int(w.dec.InputOffset())
	tok, err := w.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		container(path)
		switch t {
		case '{':
			for w.dec.More() {
				k, err := w.dec.Token()
				if err != nil {
					return err
				}
				key, ok := k.(string)
				if !ok {
					return fmt.Errorf("object key %v is not a string", k)
				}
				if err := w.value(append(path[:len(path):len(path)], key), str, container); err != nil {
					return err
				}
			}
		case '[':
			for i := 0; w.dec.More(); i++ {
				if err := w.value(append(path[:len(path):len(path)], strconv.Itoa(i)), str, container); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("unexpected %v", t)
		}
		if _, err := w.dec.Token(); err != nil { // the closing delimiter
			return err
		}
	case string:
		end := int(w.dec.InputOffset())
		start := before + bytes.IndexByte(w.data[before:end], '"')
		str(path, start, end, t)
	}
	return nil
}

func (w *jsonWalker) lineError(err error) error {
	var se *json.SyntaxError
	off := int(w.dec.InputOffset())
	if errors.As(err, &se) {
		off = int(se.Offset)
	}
	off = min(off, len(w.data))
	return &lineError{line: 1 + bytes.Count(w.data[:off], []byte("\n")), err: err}
}

func jsonEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
