package manifest_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/lockstep-dev/lockstep/manifest"
)

// Parse a release manifest, then a document with a path that escapes the
// CDN base: the error names the field.
func ExampleParse() {
	data, err := os.ReadFile("testdata/release-v1.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := manifest.Parse(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	d, _ := m.Digest()
	fmt.Println(m.ID(), d)
	for _, im := range m.Images {
		fmt.Println(im.Name, im.Ref, len(im.Platforms), "platform(s)")
	}
	fmt.Println(len(m.Assets.Files), "assets, fingerprint", m.Assets.Fingerprint)

	_, err = manifest.Parse([]byte(`{"apiVersion":"lockstep.dev/v1","kind":"ReleaseManifest",
		"release":{"name":"store-web","generation":1,"createdAt":"2021-04-05T12:00:00Z"},"images":[],
		"assets":{"cdn":["https://cdn.example/"],"files":[{"path":"../etc/passwd","size":1,
		"sha256":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}]}}`))
	var ve *manifest.ValidationError
	if errors.As(err, &ve) {
		fmt.Println(ve.Field)
	}
	// Output:
	// store-web@1 sha256:a010580d2d42697a6e69f62108eacc6aded0da91e252ad361eb9c946aa0981d5
	// web registry.example/store/web:v1 2 platform(s)
	// worker registry.example/store/worker:v1 1 platform(s)
	// 3 assets, fingerprint sha256:a2f725bee5d0ba954bda4b9ef934db0cd057a8eb0e6026ed11e2f0bd6b7fc3c8
	// assets.files[0].path
}

// Compare two releases: what changed, and whether the new one may follow
// the old. Here a tag was re-pushed between them.
func ExampleDiff() {
	old, _, err := manifest.ReadFile("testdata/release-v1.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	new, _, err := manifest.ReadFile("testdata/release-v2.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	c := manifest.Diff(old, new)
	for _, ic := range c.Images {
		fmt.Println(ic.Change, ic.Name, "tag moved:", ic.TagMoved)
	}
	fmt.Println(len(c.Assets.Added), "added,", len(c.Assets.Removed), "removed,", len(c.Assets.Changed), "changed")
	for _, p := range c.Refusals() {
		fmt.Println("refused:", p.Kind, p.Subject)
	}
	fmt.Println("refusals with web allowed:", len(c.Refusals("web")))
	// Output:
	// added api tag moved: false
	// changed web tag moved: true
	// removed worker tag moved: false
	// 1 added, 1 removed, 1 changed
	// refused: tag-moved web
	// refusals with web allowed: 0
}

func ExampleAssets_Closure() {
	a := manifest.Assets{Files: []manifest.File{
		{Path: "assets/app.js", Loads: []string{"assets/lazy.js"}},
		{Path: "assets/lazy.css"},
		{Path: "assets/lazy.js", Loads: []string{"assets/lazy.css"}},
		{Path: "index.html", Loads: []string{"assets/app.js"}},
	}}
	fmt.Println(a.Closure([]string{"index.html"}))
	// Output: [assets/app.js assets/lazy.css assets/lazy.js index.html]
}
