package sigtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
)

// Release is a release whose image, web, is a multi-arch index
// (linux/amd64, linux/arm64) in a counting in-memory Registry, signed as
// the test says, with a manifest recorded as `record` does: the image
// signatures embedded or not, the manifest signed with Key.
type Release struct {
	Reg *Registry
	// Key signs the manifest, and the images unless told otherwise.
	Key   sigsig.SignerVerifier
	Image manifest.Image
	// Index is the index's digest; Platforms the platform manifests',
	// keyed "linux/amd64", "linux/arm64".
	Index     name.Digest
	Platforms map[string]name.Digest
}

// NewRelease pushes store/web:v1 and signs, with signer (nil: the
// release's Key), the digests named in sign: "index", "linux/amd64",
// "linux/arm64".
func NewRelease(t testing.TB, signer sigsig.SignerVerifier, sign ...string) *Release {
	t.Helper()
	r := &Release{Reg: NewRegistry(t), Key: Key(t)}
	if signer == nil {
		signer = r.Key
	}
	r.Index, r.Platforms = r.Reg.PushIndex(t, "store/web", "v1")
	for _, what := range sign {
		d, ok := r.Platforms[what]
		if what == "index" {
			d, ok = r.Index, true
		}
		if !ok {
			t.Fatalf("NewRelease: nothing called %q to sign", what)
		}
		SignImage(t, d, signer, nil, nil, nil)
	}
	r.Image = Pin(t, "web", r.Index)
	return r
}

// Embed returns what `record` embeds: the image signatures that verify
// under key and policy p, read from the registry once, at record time.
func (r *Release) Embed(t testing.TB, key sigsig.Verifier, p imagesig.Policy) *manifest.Verification {
	t.Helper()
	v, err := imagesig.New(imagesig.Options{Trust: signature.Options{Key: key}, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := v.Embed(context.Background(), []manifest.Image{r.Image})
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	return emb
}

// WriteManifest writes the release manifest (store-web, generation 3, no
// assets) carrying emb (nil: none) to a temporary directory, signed with
// Key as MANIFEST.sig beside it, and returns its path.
func (r *Release) WriteManifest(t testing.TB, emb *manifest.Verification) string {
	t.Helper()
	return r.WriteManifestFunc(t, func(m *manifest.Manifest) { m.Verification = emb })
}

// WriteManifestFunc is WriteManifest with the manifest as edit leaves it
// (its apiVersion then set to the one its fields need, as record does).
func (r *Release) WriteManifestFunc(t testing.TB, edit func(*manifest.Manifest)) string {
	t.Helper()
	m, _, err := scenario.Manifest("store-web", 3, []manifest.Image{r.Image}, []string{"https://cdn.invalid/static/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	m.APIVersion = m.Version()
	raw, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	sig, err := signature.Sign(context.Background(), r.Key, raw, signature.SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".sig", sig.Base64, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
