package admission_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

// A boot gate in a few lines: the manifest from a file, the running
// digest from a launch script's file, the instance's own page probed.
func ExampleCheck() {
	// A CDN with the release's assets, and the instance's app.
	files := map[string]string{"js/app.1a2b3c4d.js": "console.log(1)", "css/site.5e6f7a8b.css": "body{}"}
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	scenario.WriteFiles(filepath.Join(dir, "cdn"), files)
	cdn := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(dir, "cdn"))))
	defer cdn.Close()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<link rel="stylesheet" href="%[1]s/css/site.5e6f7a8b.css"><script src="%[1]s/js/app.1a2b3c4d.js"></script>`, cdn.URL)
	}))
	defer app.Close()

	// The release manifest and the digest the runtime reports.
	d := func(c string) manifest.Digest { return manifest.MustParseDigest("sha256:" + strings.Repeat(c, 64)) }
	image := manifest.Image{Name: "web", Ref: "registry.example.com/web:v1", Repository: "registry.example.com/web", Digest: d("1"),
		MediaType: "application/vnd.oci.image.index.v1+json",
		Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: d("2"), Config: d("3")}}}
	_, raw, _ := scenario.Manifest("store-web", 1, []manifest.Image{image}, []string{cdn.URL + "/"}, files)
	os.WriteFile(filepath.Join(dir, "release.json"), raw, 0o644)
	os.WriteFile(filepath.Join(dir, "image-id"), []byte(d("3").String()+"\n"), 0o644)

	decision := admission.Check(context.Background(), admission.Config{
		CDN:           cdngate.Checker{},
		Source:        manifest.FileSource{Path: filepath.Join(dir, "release.json")},
		AllowUnsigned: true, // an example: production verifies a signature
		Image:         "web",
		Running:       running.File{Path: filepath.Join(dir, "image-id")},
		Platform:      "linux/amd64",
		Probes:        []string{app.URL + "/"},
	})
	fmt.Println("allowed:", decision.Allowed, "match:", decision.Match)
	fmt.Println("served:", decision.Served)
	for _, f := range decision.Findings {
		fmt.Println(f.Severity, f.Kind)
	}
	// Output:
	// allowed: true match: config
	// served: [css/site.5e6f7a8b.css js/app.1a2b3c4d.js]
	// warn manifest-unsigned
}
