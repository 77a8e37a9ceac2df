package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteJSON(t *testing.T) {
	v := map[string]any{"a": "<b>", "n": []int{1}}
	for _, tc := range []struct {
		escape bool
		want   string
	}{
		{true, "{\n  \"a\": \"\\u003cb\\u003e\",\n  \"n\": [\n    1\n  ]\n}\n"},
		{false, "{\n  \"a\": \"<b>\",\n  \"n\": [\n    1\n  ]\n}\n"},
	} {
		var b bytes.Buffer
		if err := WriteJSON(&b, v, tc.escape); err != nil || b.String() != tc.want {
			t.Errorf("WriteJSON(escapeHTML %v) = %q, %v; want %q", tc.escape, b.String(), err, tc.want)
		}
	}
	if err := UnknownFormat("yaml", []string{"text", "json"}); err == nil || !strings.Contains(err.Error(), `"yaml": want one of text, json`) {
		t.Errorf("UnknownFormat = %v", err)
	}
}
