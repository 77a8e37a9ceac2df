package sigtest

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// SignImage signs the image or index at d with sv and pushes the signature
// as `cosign sign --tlog-upload=false` does (the sha256-<hex>.sig tag,
// appending to signatures already there). certPEM and chainPEM, when set,
// are attached as a keyless signature's certificate and chain. claimed,
// when set, is the digest the payload claims instead of d (a signature
// moved from another image).
func SignImage(t testing.TB, d name.Digest, sv sigsig.Signer, certPEM, chainPEM []byte, claimed *name.Digest, ropts ...remote.Option) {
	t.Helper()
	img := d
	if claimed != nil {
		img = *claimed
	}
	p, err := (&payload.Cosign{Image: img}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sv.SignMessage(bytes.NewReader(p))
	if err != nil {
		t.Fatal(err)
	}
	var opts []static.Option
	if certPEM != nil {
		opts = append(opts, static.WithCertChain(certPEM, chainPEM))
	}
	sig, err := static.NewSignature(p, base64.StdEncoding.EncodeToString(raw), opts...)
	if err != nil {
		t.Fatal(err)
	}
	attach(t, d, func(se oci.SignedEntity) (oci.SignedEntity, error) { return mutate.AttachSignatureToEntity(se, sig) }, ociremote.WriteSignatures, ropts)
}

// attach reads the entity at d, adds to it with add, and pushes it with
// write (ociremote.WriteSignatures or WriteAttestations).
func attach(t testing.TB, d name.Digest, add func(oci.SignedEntity) (oci.SignedEntity, error), write func(name.Repository, oci.SignedEntity, ...ociremote.Option) error, ropts []remote.Option) {
	t.Helper()
	o := ociremote.WithRemoteOptions(ropts...)
	se, err := ociremote.SignedEntity(d, o)
	if err != nil {
		t.Fatal(err)
	}
	if se, err = add(se); err != nil {
		t.Fatal(err)
	}
	if err := write(d.Context(), se, o); err != nil {
		t.Fatal(err)
	}
}
