package signature_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"os"

	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verdict"
)

// Sign a manifest's bytes with a key, then verify them, and see a changed
// manifest refused.
func Example() {
	ctx := context.Background()
	pk, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key, _ := sigsig.LoadSignerVerifier(pk, crypto.SHA256) // or signature.LoadSigner(ctx, "cosign.key", signature.EnvPassword)
	raw, _ := os.ReadFile("testdata/release.json")

	sig, err := signature.Sign(ctx, key, raw, signature.SignOptions{})
	if err != nil {
		panic(err)
	}
	v, _ := signature.NewVerifier(signature.Options{Key: key}) // or signature.LoadVerifier(ctx, "cosign.pub")

	s, _ := manifest.NewSigned(raw, "release.json")
	s.Signature = sig.Base64 // what MANIFEST.sig holds
	fmt.Println("verified:", v.Verify(ctx, s) == nil)

	s.Raw = append(s.Raw, '\n')
	err = v.Verify(ctx, s)
	fmt.Println("changed manifest refused:", verdict.IsMismatch(err))
	// Output:
	// verified: true
	// changed manifest refused: true
}
