package probe_test

import (
	"slices"
	"testing"

	"github.com/lockstep-dev/lockstep/admission/probe"
)

// TestMapDisguised: a reference disguised from the CDN base (another case
// of its host, protocol-relative, a query or fragment, percent-encoding,
// dot segments) still maps to the asset a browser fetches, so that the
// gate checks it; dot segments hidden by percent-encoding stay in the ID,
// decoded, which no manifest lists (refused, not skipped).
func TestMapDisguised(t *testing.T) {
	m := mapPage(t, "https://app.example.org/page/", "text/html",
		`<script src="https://CDN.Example.COM/static/js/a.js"></script>`+
			`<script src="//cdn.example.com/static/js/b.js"></script>`+
			`<script src="https://cdn.example.com/static/js/c.js?v=1#top"></script>`+
			`<script src="https://cdn.example.com/static/js/%64.js"></script>`+
			`<script src="https://cdn.example.com/static/x/../js/e.js"></script>`+
			`<script src="/static/../static/js/f.js"></script>`+
			`<script src="https://cdn.example.com/static/js/%2e%2e/%2e%2e/g.js"></script>`)
	want := []string{"js/../../g.js", "js/a.js", "js/b.js", "js/c.js", "js/d.js", "js/e.js", "js/f.js"}
	if !slices.Equal(m.IDs, want) {
		t.Errorf("IDs = %q, want %q", m.IDs, want)
	}
	if len(m.Foreign) != 0 {
		t.Errorf("Foreign = %q, want none", m.Foreign)
	}
	if wantLocal := []probe.Local{{ID: "js/f.js", Base: "https://app.example.org/static/"}}; !slices.Equal(m.Local, wantLocal) {
		t.Errorf("Local = %+v, want %+v", m.Local, wantLocal)
	}
}
