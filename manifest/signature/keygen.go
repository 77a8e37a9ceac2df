package signature

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/sigstore/cosign/v2/pkg/cosign"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
)

// KeyPair is where GenerateKeyPair wrote a key pair.
type KeyPair struct {
	// PrivateKey is the encrypted private key (PREFIX.key, mode 0600).
	PrivateKey string `json:"privateKey"`
	// PublicKey is its PEM public key (PREFIX.pub).
	PublicKey string `json:"publicKey"`
	// Fingerprint is the public key's "SHA256:<hex>", as reports name it.
	Fingerprint string `json:"fingerprint"`
}

// GenerateKeyPair makes a new key pair in cosign's format, the one
// `cosign generate-key-pair` writes: an ECDSA P-256 private key encrypted
// with the password pass returns (PREFIX.key, mode 0600) and its public
// key (PREFIX.pub). Either file existing already is an error wrapping
// fs.ErrExist, and nothing is written; pass's error (ErrNoPassword) is
// returned as it is. On error, no file of the pair is left behind.
func GenerateKeyPair(prefix string, pass PassFunc) (*KeyPair, error) {
	kp := &KeyPair{PrivateKey: prefix + ".key", PublicKey: prefix + ".pub"}
	for _, p := range []string{kp.PrivateKey, kp.PublicKey} {
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("%s: %w (a key is never overwritten)", p, fs.ErrExist)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if pass == nil {
		pass = EnvPassword
	}
	if _, err := pass(true); err != nil {
		return nil, err
	}
	keys, err := cosign.GenerateKeyPair(pass)
	if err != nil {
		return nil, fmt.Errorf("generating the key pair: %w", err)
	}
	v, err := VerifierFromPEM(keys.PublicBytes)
	if err != nil {
		return nil, err
	}
	kp.Fingerprint = Fingerprint(v)
	if err := atomicfile.Write(kp.PrivateKey, keys.PrivateBytes, 0o600); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(kp.PublicKey, keys.PublicBytes, 0o644); err != nil {
		os.Remove(kp.PrivateKey)
		return nil, err
	}
	return kp, nil
}
