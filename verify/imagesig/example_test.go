package imagesig_test

import (
	"fmt"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
)

// Which digests of an index must be signed, under each policy.
func ExamplePolicy_Targets() {
	d := func(c string) manifest.Digest { return manifest.MustParseDigest("sha256:" + fmt.Sprintf("%064s", c)) }
	im := &manifest.Image{
		Name: "web", Digest: d("1"), MediaType: "application/vnd.oci.image.index.v1+json",
		Platforms: []manifest.Platform{
			{OS: "linux", Architecture: "amd64", Digest: d("2")},
			{OS: "linux", Architecture: "arm64", Digest: d("3")},
		},
	}
	for _, p := range []imagesig.Policy{
		{},
		{Platforms: []string{"linux/arm64"}},
		{Index: imagesig.IndexOnly},
		{Index: imagesig.IndexAndPlatforms},
	} {
		ts, _ := p.Targets(im)
		var what []string
		for _, t := range ts {
			what = append(what, t.What)
		}
		fmt.Printf("%-9q %v\n", p.Index, what)
	}
	// Output:
	// ""        [linux/amd64 linux/arm64]
	// ""        [linux/arm64]
	// "index"   [index]
	// "all"     [index linux/amd64 linux/arm64]
}
