package bootgate

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// GenerateKey writes a new ECDSA P-256 key pair, cosign's default kind,
// to dir/cosign.key (a plain PKCS#8 PEM private key, mode 0600) and
// dir/cosign.pub, and returns their paths. The demo's builder signs its
// attestation with one; the release's key pair is `lockstep keygen`'s.
func GenerateKey(dir string) (priv, pub string, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", "", err
	}
	pubPEM, err := cryptoutils.MarshalPublicKeyToPEM(k.Public())
	if err != nil {
		return "", "", err
	}
	priv, pub = filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	if err := os.WriteFile(priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return "", "", err
	}
	return priv, pub, os.WriteFile(pub, pubPEM, 0o644)
}
