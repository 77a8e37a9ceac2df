package app

import (
	"encoding/json"
	"io"
	"strings"
)

// jsonError is what a command given --format json prints on stdout when
// it exits 1 (refused: a stale generation, a moved tag), 2 (usage or
// invalid input) or 3 (could not verify) before printing a report: a
// pipeline that parses stdout always gets one JSON document. The message
// is also said on stderr.
type jsonError struct {
	Error jsonErrorBody `json:"error"`
}

type jsonErrorBody struct {
	// ExitCode is the exit code: 1, 2 or 3.
	ExitCode int `json:"exitCode"`
	// Kind is "refused" (exit 1), "usage" (exit 2) or "unverified"
	// (exit 3).
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// countingWriter counts what a command wrote.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// wantsJSON reports whether flags (as typed, each with its value) ask
// for --format json.
func wantsJSON(flags []string) bool {
	for i, f := range flags {
		name, value, eq := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if name != "format" || !strings.HasPrefix(f, "-") {
			continue
		}
		if !eq && i+1 < len(flags) {
			value = flags[i+1]
		}
		if value == "json" {
			return true
		}
	}
	return false
}

// writeJSONError writes err's JSON error object on w when its exit code
// is 1, 2 or 3; it returns err.
func writeJSONError(w io.Writer, err error) error {
	code := ExitCode(err)
	kind := map[int]string{ExitMismatch: "refused", ExitInvalid: "usage", ExitUnverified: "unverified"}[code]
	if kind == "" {
		return err
	}
	b, _ := json.Marshal(jsonError{Error: jsonErrorBody{ExitCode: code, Kind: kind, Message: err.Error()}})
	w.Write(append(b, '\n'))
	return err
}
