package cdn

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestUnhashedEveryBase: a file without a content hash in its name is
// compared by its bytes on every CDN base, so a second base that serves
// other bytes of the same size is wrong-content there; a name that merely
// looks hashed (app.deadbeef.js) served with other bytes of the same size
// gets the header check alone: ok by size where no header states a
// checksum, wrong-content where one states the served bytes' SHA-256.
func TestUnhashedEveryBase(t *testing.T) {
	files := map[string]string{"robots.txt": "User-agent: *", "app.deadbeef.js": "console.log(1)"}
	other := map[string]string{"robots.txt": "User-agent: -", "app.deadbeef.js": "console.log(2)"}
	serve := func(content map[string]string, checksum bool) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, ok := content[strings.TrimPrefix(r.URL.Path, "/")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			if checksum {
				w.Header().Set("x-amz-checksum-sha256", sha64(b))
			}
			http.ServeContent(w, r, "", time.Time{}, strings.NewReader(b))
		}))
	}
	good, bad, badSum := serve(files, false), serve(other, false), serve(other, true)
	defer good.Close()
	defer bad.Close()
	defer badSum.Close()
	rep, err := Check(context.Background(), assets(files, good.URL, bad.URL, badSum.URL), Options{Client: fastClient()})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		status   Status
		compared string
	}
	wants := map[string]want{
		good.URL + "/robots.txt":        {StatusOK, ComparedBytes},
		bad.URL + "/robots.txt":         {StatusWrongContent, ""},
		badSum.URL + "/robots.txt":      {StatusWrongContent, ""},
		good.URL + "/app.deadbeef.js":   {StatusOK, ComparedSize},
		bad.URL + "/app.deadbeef.js":    {StatusOK, ComparedSize},
		badSum.URL + "/app.deadbeef.js": {StatusWrongContent, ""},
	}
	if len(rep.Results) != len(wants) {
		t.Fatalf("%d results, want %d", len(rep.Results), len(wants))
	}
	for _, res := range rep.Results {
		w, ok := wants[res.URL]
		if !ok {
			t.Errorf("unexpected result for %s", res.URL)
			continue
		}
		if res.Status != w.status || (w.compared != "" && res.Compared != w.compared) {
			t.Errorf("%s: %s compared %q (%q), want %s compared %q", res.URL, res.Status, res.Compared, res.Reason, w.status, w.compared)
		}
		if strings.HasSuffix(res.URL, ".js") && res.Method != http.MethodHead {
			t.Errorf("%s: checked by %s, want HEAD (a hashed-looking name gets the header check)", res.URL, res.Method)
		}
	}
}
