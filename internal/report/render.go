package report

import (
	"fmt"
	"io"
)

// TextJSON are the formats of a report that renders as text, for people,
// or as JSON.
var TextJSON = []string{"text", "json"}

// Render writes v in format: "text" by text, "json" by WriteJSON (HTML
// escaped); any other format is UnknownFormat's error, naming TextJSON.
// It is the Write of every report that takes those two formats.
func Render(w io.Writer, format string, v any, text func(io.Writer) error) error {
	switch format {
	case "text":
		return text(w)
	case "json":
		return WriteJSON(w, v, true)
	}
	return UnknownFormat(format, TextJSON)
}

// Deletion is how the text of a deleting command's report words what it
// removed: "deleted", or "would delete" in a dry run.
func Deletion(dryRun bool) string {
	if dryRun {
		return "would delete"
	}
	return "deleted"
}

// DryRunHint ends the text of a dry run that would have deleted something
// with how to delete; it writes nothing otherwise.
func DryRunHint(w io.Writer, dryRun bool, deleted int) error {
	if !dryRun || deleted == 0 {
		return nil
	}
	_, err := fmt.Fprintln(w, "dry run: pass --yes to delete")
	return err
}
