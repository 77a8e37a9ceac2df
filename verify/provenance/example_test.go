package provenance_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"

	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verify/provenance"
)

// The spellings of one repository that provenance and manifests use.
func ExampleNormalizeRepository() {
	for _, s := range []string{
		"git+https://github.com/acme/store@refs/heads/main",
		"https://GitHub.com/acme/store.git",
		"https://github.com/acme/store",
	} {
		fmt.Println(provenance.NormalizeRepository(s))
	}
	// Output:
	// https://github.com/acme/store
	// https://github.com/acme/store
	// https://github.com/acme/store
}

// At boot, a manifest that embeds no provenance for the image it pins is
// refused, with no registry request; the refusal names its check.
func ExampleVerifier_VerifyEmbedded() {
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	builder, _ := sigsig.LoadVerifier(priv.Public(), crypto.SHA256)
	v, err := provenance.New(provenance.Options{Trust: signature.Options{Key: builder}})
	if err != nil {
		fmt.Println(err)
		return
	}
	d := manifest.MustParseDigest("sha256:" + fmt.Sprintf("%064d", 1))
	m := &manifest.Manifest{
		Release: manifest.Release{Name: "store-web", Generation: 7,
			Source: &manifest.BuildSource{Repository: "https://github.com/acme/store", Commit: "0123456789abcdef0123456789abcdef01234567"}},
		Images: []manifest.Image{{Name: "web", Digest: d, Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: d}}}},
	}
	err = v.VerifyEmbedded(context.Background(), m)
	var pe *provenance.Error
	if errors.As(err, &pe) {
		fmt.Println("refused:", pe.Check)
	}
	// Output:
	// refused: missing
}
