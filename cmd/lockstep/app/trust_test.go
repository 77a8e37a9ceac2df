package app

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
)

// TestImageVerifierFromFlags: the flags pin and admit take build a
// verifier that checks image signatures by digest.
func TestImageVerifierFromFlags(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	img, _ := random.Image(256, 1)
	ref, _ := name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/app/web:v1")
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	dref := ref.Context().Digest(d.String())
	key := sigtest.Key(t)
	sigtest.SignImage(t, dref, key, nil, nil, nil)
	dir := t.TempDir()
	pub := dir + "/cosign.pub"
	writeFileT(t, pub, sigtest.PublicPEM(t, key))
	otherPub := dir + "/other.pub"
	writeFileT(t, otherPub, sigtest.PublicPEM(t, sigtest.Key(t)))

	// build runs the flags through a command, as pin and admit will.
	build := func(args ...string) (v *imagesig.Verifier, err error) {
		a := New()
		a.Commands = []*cli.Command{{Name: "x", Flags: append(trustFlags(), imageSignatureFlags()...), Action: func(c *cli.Context) error {
			v, err = imageVerifierFromFlags(c.Context, c, newInvocation(nil), nil, nil)
			return nil
		}}}
		if rerr := a.RunContext(context.Background(), append([]string{"lockstep", "x"}, args...)); rerr != nil {
			t.Fatal(rerr)
		}
		return v, err
	}
	im := manifest.Image{Name: "web", Repository: ref.Context().Name(), Digest: manifest.MustParseDigest(d.String()),
		MediaType: "application/vnd.oci.image.manifest.v1+json",
		Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: manifest.MustParseDigest(d.String())}}}
	for _, tc := range []struct {
		args []string
		want string // "ok", "refused", "usage"
	}{
		{[]string{"--verify-key", pub}, "ok"},
		{[]string{"--image-key", pub, "--signature-cache-dir", dir + "/cache"}, "ok"},
		{[]string{"--key", pub}, "ok"},
		{[]string{"--key", otherPub, "--image-key", pub}, "ok"},
		{[]string{"--image-key", otherPub}, "refused"},
		{nil, "usage"},
		{[]string{"--image-key", pub, "--image-signature-policy", "some"}, "usage"},
	} {
		v, err := build(tc.args...)
		got := "ok"
		switch {
		case err != nil && ExitCode(err) == ExitInvalid:
			got = "usage"
		case err != nil:
			got = err.Error()
		default:
			if err := v.Verify(context.Background(), []manifest.Image{im}); verdict.IsMismatch(err) {
				got = "refused"
			} else if err != nil {
				got = err.Error()
			}
		}
		if got != tc.want {
			t.Errorf("imageVerifierFromFlags(%v): %s, want %s", tc.args, got, tc.want)
		}
	}
}
