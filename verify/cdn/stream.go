package cdn

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// jsonStream writes a report's JSON while the check runs, byte for byte
// what Report.Write writes in "json": the members before the results at
// the start, each result as soon as it and every one before it are
// decided (in the order of Report.Results), and the TLS endpoints and
// the summary at the end. encoding/json lays out everything but the
// results (a copy of the report with none, cut around its empty
// "results" array); each result is encoded as the indented array would
// hold it. After a write error it writes nothing more and end returns
// the error.
type jsonStream struct {
	w     *bufio.Writer
	buf   bytes.Buffer
	enc   *json.Encoder // into buf, as an element of the results array
	n     int           // results written
	err   error
	empty []Result
}

// resultsMember is where an indented report with no results holds them.
var resultsMember = []byte(`"results": []`)

func newJSONStream(w io.Writer) *jsonStream {
	s := &jsonStream{w: bufio.NewWriterSize(w, 64<<10), empty: []Result{}}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetIndent("    ", "  ")
	s.enc.SetEscapeHTML(false)
	return s
}

// split returns r's JSON report with no results, cut before and after its
// empty results array.
func (s *jsonStream) split(r *Report) (head, tail []byte, err error) {
	c := *r
	c.Results = s.empty
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&c); err != nil {
		return nil, nil, err
	}
	i := bytes.Index(b.Bytes(), resultsMember)
	if i < 0 {
		return nil, nil, errors.New("encoding the report: no results member")
	}
	i += len(resultsMember) - 1 // at the array's closing bracket
	return b.Bytes()[:i], b.Bytes()[i:], nil
}

// begin writes the members before the results: r holds them (bases,
// files, origin…), its results, TLS endpoints and summary are not read.
func (s *jsonStream) begin(r *Report) {
	head, _, err := s.split(r)
	if err != nil {
		s.err = err
		return
	}
	s.write(head)
}

// result writes the next result.
func (s *jsonStream) result(res *Result) {
	if s.err != nil {
		return
	}
	s.buf.Reset()
	if err := s.enc.Encode(res); err != nil {
		s.err = err
		return
	}
	b := bytes.TrimSuffix(s.buf.Bytes(), []byte("\n"))
	if s.n == 0 {
		s.write([]byte("\n    "))
	} else {
		s.write([]byte(",\n    "))
	}
	s.write(b)
	s.n++
}

// end writes what follows the results, from the complete report r, and
// flushes.
func (s *jsonStream) end(r *Report) error {
	if s.err != nil {
		return s.err
	}
	_, tail, err := s.split(r)
	if err != nil {
		return err
	}
	if s.n > 0 {
		s.write([]byte("\n  "))
	}
	s.write(tail)
	if s.err == nil {
		s.err = s.w.Flush()
	}
	return s.err
}

func (s *jsonStream) write(b []byte) {
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
}
