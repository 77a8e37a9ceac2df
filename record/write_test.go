package record

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/cdn"
)

// recordOptions are a release of one image and the assets of dir, served
// by a CDN that serves served.
func recordOptions(t *testing.T, dir, served string) Options {
	t.Helper()
	host := testRegistry(t)
	pushImage(t, host+"/store/web:v1")
	srv := httptest.NewServer(http.FileServer(http.Dir(served)))
	t.Cleanup(srv.Close)
	return Options{
		Release: "store-web", Generation: 1,
		Images: []Image{{Name: "web", Ref: host + "/store/web:v1"}},
		Assets: assets.Options{Dir: dir},
		CDN:    []string{srv.URL + "/"},
	}
}

func TestRecordChecksTheCDN(t *testing.T) {
	dir := assetDir(t)
	opts := recordOptions(t, dir, dir)
	out := filepath.Join(t.TempDir(), "release.json")
	res, err := Record(context.Background(), opts, Output{Path: out, CheckCDN: &cdn.Options{}})
	if err != nil {
		t.Fatalf("Record with every asset on the CDN: %v", err)
	}
	if res.CDN == nil || res.CDN.Summary.OK != 2 || res.Path != out {
		t.Errorf("Record = %+v, want a CDN report of 2 ok and the manifest at %s", res, out)
	}
	if _, raw, err := manifest.ReadFile(out); err != nil || manifest.SHA256(raw) != res.Digest {
		t.Errorf("the file written: %v (digest %s, want %s)", err, manifest.SHA256(raw), res.Digest)
	}

	// An asset the CDN lacks: refused with the report, nothing written.
	opts = recordOptions(t, dir, t.TempDir())
	out = filepath.Join(t.TempDir(), "release.json")
	res, err = Record(context.Background(), opts, Output{Path: out, CheckCDN: &cdn.Options{}})
	if !verdict.IsMismatch(err) || res == nil || res.CDN == nil || len(res.CDN.Failed()) != 2 {
		t.Fatalf("Record with the assets missing on the CDN = %+v, %v; want a mismatch with the report", res, err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused Record wrote %s (%v)", out, err)
	}
}

func TestRecordSigns(t *testing.T) {
	dir := assetDir(t)
	opts := recordOptions(t, dir, dir)
	sv := sigtest.Key(t)
	sign := func(ctx context.Context, raw []byte) (*signature.Signature, error) {
		return signature.Sign(ctx, sv, raw, signature.SignOptions{Bundle: true})
	}
	out := filepath.Join(t.TempDir(), "release.json")
	res, err := Record(context.Background(), opts, Output{Path: out, Sign: sign, Bundle: out + signature.BundleSuffix})
	if err != nil {
		t.Fatal(err)
	}
	if res.Signature != out+".sig" || res.Bundle != out+".sigstore.json" {
		t.Errorf("Record wrote signature %q and bundle %q, want %s.sig and %s.sigstore.json", res.Signature, res.Bundle, out, out)
	}
	v, err := signature.NewVerifier(signature.Options{Key: sv})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signature.VerifyFile(context.Background(), v, out, "", ""); err != nil {
		t.Errorf("the signature Record wrote does not verify: %v", err)
	}

	failing := func(context.Context, []byte) (*signature.Signature, error) { return nil, errors.New("the KMS said no") }
	out2 := filepath.Join(t.TempDir(), "release.json")
	if _, err := Record(context.Background(), opts, Output{Path: out2, Sign: failing}); err == nil {
		t.Error("Record with a failing signer succeeded")
	}
	if _, err := os.Stat(out2); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Record with a failing signer wrote the manifest (%v)", err)
	}
	var ve *manifest.ValidationError
	if _, err := Record(context.Background(), opts, Output{Sign: sign}); !errors.As(err, &ve) {
		t.Errorf("Record signing with no Path = %v, want a *manifest.ValidationError", err)
	}
}

func TestRecordEmbeds(t *testing.T) {
	dir := assetDir(t)
	opts := recordOptions(t, dir, dir)
	want := &manifest.Verification{}
	var got []manifest.Image
	opts.Embed = func(_ context.Context, images []manifest.Image) (*manifest.Verification, error) {
		got = images
		return want, nil
	}
	res, err := Record(context.Background(), opts, Output{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Digest.IsZero() || res.Manifest.Verification != want {
		t.Errorf("Embed saw %+v and the manifest carries %+v; want the pinned image and Embed's material", got, res.Manifest.Verification)
	}
	opts.Embed = func(context.Context, []manifest.Image) (*manifest.Verification, error) {
		return nil, &verdict.MismatchError{Subject: "image web", Reason: "unsigned"}
	}
	if _, err := Record(context.Background(), opts, Output{}); !verdict.IsMismatch(err) {
		t.Errorf("Record with an unsigned image = %v, want Embed's mismatch", err)
	}
}

func TestResultWrite(t *testing.T) {
	raw := []byte(`{"apiVersion":"lockstep.dev/v1"}`)
	d := manifest.SHA256(raw)
	for _, tc := range []struct {
		name     string
		res      Result
		terminal bool
		want     string
	}{
		{"written to a file", Result{Raw: raw, Digest: d, Path: "release.json"}, false, d.String() + "\n"},
		{"written to a file, on a terminal", Result{Raw: raw, Digest: d, Path: "release.json"}, true, d.String() + "\n"},
		{"to a pipe", Result{Raw: raw, Digest: d}, false, string(raw)},
		{"to a terminal", Result{Raw: raw, Digest: d}, true, string(raw) + "\n"},
	} {
		var b bytes.Buffer
		if err := tc.res.Write(&b, tc.terminal); err != nil || b.String() != tc.want {
			t.Errorf("%s: Write = %q, %v; want %q", tc.name, b.String(), err, tc.want)
		}
		if string(tc.res.Raw) != string(raw) {
			t.Errorf("%s: Write changed Raw to %q", tc.name, tc.res.Raw)
		}
	}
}
