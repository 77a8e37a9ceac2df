package cdn_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/cdn"
)

// A CDN that serves app.js but not logo.png: Check reports logo.png
// missing, and Err says so as a mismatch (exit 1).
func ExampleCheck() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/assets/app.js" {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader("console.log(1)\n"))
	}))
	defer srv.Close()
	files := []manifest.File{
		{Path: "app.js", Size: 15, SHA256: manifest.SHA256([]byte("console.log(1)\n")).Hex},
		{Path: "logo.png", Size: 2048, SHA256: strings.Repeat("0", 64)},
	}
	assets := manifest.Assets{CDN: []string{srv.URL + "/assets/"}, Files: files, Fingerprint: manifest.Fingerprint(files)}

	rep, err := cdn.Check(context.Background(), assets, cdn.Options{})
	if err != nil {
		fmt.Println("could not check:", err)
		return
	}
	for _, r := range rep.Results {
		fmt.Println(r.Path, r.Status, r.HTTPStatus)
	}
	fmt.Println(rep.Summary.Checked, "checked,", rep.Summary.Missing, "missing")
	fmt.Println(rep.Err() != nil)
	// Output:
	// app.js ok 200
	// logo.png missing 404
	// 2 checked, 1 missing
	// true
}
