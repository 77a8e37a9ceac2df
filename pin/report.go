package pin

import (
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/pin/internal/rewrite"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// Report is what Run pinned and rewrote; its JSON is the shape of
// `lockstep pin --format json`, documented in docs/pin.md (JSON output).
type Report struct {
	// Images are the pinned images, in the order of the requests.
	Images []Image `json:"images"`
	// Moved lists every moved tag, allowed or not (registry.Result.Moved).
	Moved []registry.MovedTag `json:"moved"`
	// Written says what was rewritten in each Write file.
	Written []rewrite.Result `json:"written"`
}

// Image is one pinned image.
type Image struct {
	// Pinned is repo:tag@digest, as in the text output.
	Pinned string `json:"pinned"`
	manifest.Image
	// Signature says how the image's signatures were verified; absent
	// when pin verifies none.
	Signature *Signature `json:"signature,omitempty"`
}

// Signature is how one image's signatures were verified.
type Signature struct {
	// Verified: every digest of Digests carries a valid signature.
	Verified bool `json:"verified"`
	// Signer is whose signatures count: "key SHA256:…" or the keyless
	// identity.
	Signer string `json:"signer"`
	// Policy is the index policy: platforms, index or all.
	Policy string `json:"policy"`
	// Digests are the digests the policy requires signed.
	Digests []SignedDigest `json:"digests"`
	// Error is the refusal, when not Verified.
	Error string `json:"error,omitempty"`
}

// SignedDigest is a digest the signature policy requires signed.
type SignedDigest struct {
	// What is "image" (a single manifest), "index", or a platform.
	What   string          `json:"what"`
	Digest manifest.Digest `json:"digest"`
}

// newReport is the report of res; v, when set, verified its signatures.
func newReport(res *registry.Result, v *imagesig.Verifier) *Report {
	r := &Report{Images: []Image{}, Moved: res.Moved, Written: []rewrite.Result{}}
	for i, im := range res.Images {
		pi := Image{Pinned: registry.Pinned(im), Image: im}
		if v != nil {
			pi.Signature = signatureOf(v, &im, res.Refusals[i])
		}
		r.Images = append(r.Images, pi)
	}
	return r
}

// signatureOf says how im's signatures were verified: refusal is the
// verifier's, nil when it accepted im.
func signatureOf(v *imagesig.Verifier, im *manifest.Image, refusal error) *Signature {
	pol := v.Policy()
	s := &Signature{Verified: refusal == nil, Signer: v.Signer(), Policy: string(pol.Index), Digests: []SignedDigest{}}
	targets, _ := pol.Targets(im) // an error here is the refusal
	for _, t := range targets {
		s.Digests = append(s.Digests, SignedDigest{What: t.What, Digest: t.Digest})
	}
	if refusal != nil {
		s.Error = refusal.Error()
	}
	return s
}
