package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes v as JSON indented by two spaces, followed by a
// newline: the shape of every report's json format. escapeHTML is
// json.Encoder's SetEscapeHTML (true: <, > and & as \u003c…, as
// json.Marshal does).
func WriteJSON(w io.Writer, v any, escapeHTML bool) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(escapeHTML)
	return enc.Encode(v)
}

// UnknownFormat is the error of a report asked for a format it does not
// take; formats are those it does.
func UnknownFormat(format string, formats []string) error {
	return fmt.Errorf("unknown format %q: want one of %s", format, strings.Join(formats, ", "))
}
