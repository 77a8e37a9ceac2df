package report

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	v := map[string]string{"a": "<b>"}
	text := func(w io.Writer) error { _, err := io.WriteString(w, "for people\n"); return err }
	for _, tt := range []struct {
		format, want, err string
	}{
		{format: "text", want: "for people\n"},
		{format: "json", want: "{\n  \"a\": \"\\u003cb\\u003e\"\n}\n"},
		{format: "yaml", err: `unknown format "yaml": want one of text, json`},
		{format: "", err: `unknown format "": want one of text, json`},
	} {
		var b bytes.Buffer
		err := Render(&b, tt.format, v, text)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err || b.Len() != 0 {
				t.Errorf("Render(%q) = %v, wrote %q; want the error %q and nothing written", tt.format, err, b.String(), tt.err)
			}
			continue
		}
		if err != nil || b.String() != tt.want {
			t.Errorf("Render(%q) = %v, %q; want %q", tt.format, err, b.String(), tt.want)
		}
	}
}

func TestDeletionWords(t *testing.T) {
	if Deletion(false) != "deleted" || Deletion(true) != "would delete" {
		t.Errorf("Deletion = %q, %q", Deletion(false), Deletion(true))
	}
	for _, tt := range []struct {
		dryRun  bool
		deleted int
		want    string
	}{
		{dryRun: true, deleted: 2, want: "dry run: pass --yes to delete\n"},
		{dryRun: true, deleted: 0},
		{dryRun: false, deleted: 2},
	} {
		var b strings.Builder
		if err := DryRunHint(&b, tt.dryRun, tt.deleted); err != nil || b.String() != tt.want {
			t.Errorf("DryRunHint(%v, %d) = %v, %q; want %q", tt.dryRun, tt.deleted, err, b.String(), tt.want)
		}
	}
}
