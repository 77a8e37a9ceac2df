package manifest

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	old := testManifest()
	same := testManifest()
	same.Release.Generation = 8
	if c := Diff(old, same); c.Differs() || len(c.Problems) != 0 || c.Assets.Unchanged != 2 {
		t.Errorf("Diff(a manifest, itself at a higher generation) = %+v, want no difference and no problem", c)
	}
	if c := Diff(old, testManifest()); len(c.Refusals()) != 1 || c.Refusals()[0].Kind != ProblemGenerationNotRising {
		t.Errorf("Diff(same generation).Refusals() = %+v, want generation-not-rising", c.Refusals())
	}

	next := testManifest()
	next.Release.Generation = 8
	next.Images[0].Digest = MustParseDigest("sha256:" + strings.Repeat("9", 64))
	next.Images = append(next.Images, Image{Name: "api", Ref: "r/api:v2", Repository: "r/api", Tag: "v2", Digest: MustParseDigest("sha256:" + strings.Repeat("8", 64))})
	next.Assets.Files[1].SHA256 = strings.Repeat("c", 64)
	next.Assets.Files = append(next.Assets.Files, File{Path: "z.js", Size: 1, SHA256: strings.Repeat("d", 64)})
	next.Assets.Files = next.Assets.Files[1:]
	c := Diff(old, next)
	if len(c.Images) != 2 || c.Images[0].Name != "api" || c.Images[0].Change != Added || c.Images[1].Change != Changed || !c.Images[1].TagMoved {
		t.Errorf("Diff images = %+v, want api added and web changed with its tag moved", c.Images)
	}
	a := c.Assets
	if len(a.Added) != 1 || a.Added[0].Path != "z.js" || len(a.Removed) != 1 || a.Removed[0].Path != "assets/app-1a2b.js" ||
		len(a.Changed) != 1 || a.Changed[0].Path != "index.html" || a.Unchanged != 0 {
		t.Errorf("Diff assets = %+v, want z.js added, assets/app-1a2b.js removed, index.html changed", a)
	}
	if r := c.Refusals(); len(r) != 1 || r[0].Kind != ProblemTagMoved || r[0].Subject != "web" {
		t.Errorf("Refusals() = %+v, want web's moved tag", r)
	}
	if r := c.Refusals("web"); len(r) != 0 {
		t.Errorf("Refusals(web) = %+v, want none", r)
	}
	next.Images[0].Tag, next.Images[0].Ref = "v2", "registry.example/store/web:v2"
	if c := Diff(old, next); len(c.Refusals()) != 0 {
		t.Errorf("Diff with a new tag: Refusals() = %+v, want none (a new tag is no moved tag)", c.Refusals())
	}
	other := testManifest()
	other.Release.Name, other.Release.Generation = "other", 9
	if r := Diff(old, other).Refusals(); len(r) != 1 || r[0].Kind != ProblemReleaseRenamed {
		t.Errorf("Diff(another release).Refusals() = %+v, want release-renamed", r)
	}
}
