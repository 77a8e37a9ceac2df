package signature

import (
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/kms"

	"github.com/lockstep-dev/lockstep/internal/regfile"
	"github.com/lockstep-dev/lockstep/verdict"
)

// PassFunc returns the password of an encrypted key; the bool says
// whether the password is being set (always false here).
type PassFunc = cosign.PassFunc

// EnvPassword is the PassFunc cosign uses in CI: the COSIGN_PASSWORD
// environment variable. Unset is ErrNoPassword (set and empty is the
// empty password), so that a forgotten variable is named rather than
// reported as a wrong password.
func EnvPassword(set bool) ([]byte, error) { return LookupPassword(os.LookupEnv)(set) }

// LookupPassword is EnvPassword over another environment: lookup (as
// os.LookupEnv) is asked for COSIGN_PASSWORD, e.g. a command's own
// environment when it runs in process.
func LookupPassword(lookup func(string) (string, bool)) PassFunc {
	return func(bool) ([]byte, error) {
		pw, ok := lookup("COSIGN_PASSWORD")
		if !ok {
			return nil, ErrNoPassword
		}
		return []byte(pw), nil
	}
}

// ErrNoPassword is EnvPassword's error when COSIGN_PASSWORD is not set.
var ErrNoPassword = errors.New("COSIGN_PASSWORD is not set: export the key's password in COSIGN_PASSWORD (COSIGN_PASSWORD= for the empty password)")

// kmsSchemes are the KMS URI schemes sigstore knows. Only the providers
// whose packages are linked into the binary can be used (see docs/signatures.md, Keys).
var kmsSchemes = []string{"awskms://", "gcpkms://", "azurekms://", "hashivault://"}

// IsKMS reports whether ref is a KMS key URI such as awskms:///alias/name.
func IsKMS(ref string) bool {
	for _, s := range kmsSchemes {
		if strings.HasPrefix(ref, s) {
			return true
		}
	}
	return false
}

// KeyError says that a key could not be loaded: a missing file, a file
// that is not a key, a wrong password, a KMS provider that is not compiled
// in. It is an input error (exit 2), not a refusal.
type KeyError struct {
	Ref string
	Err error
}

func (e *KeyError) Error() string { return fmt.Sprintf("loading key %s: %v", e.Ref, e.Err) }
func (e *KeyError) Unwrap() error { return e.Err }

// LoadSigner loads the private key ref names: a cosign encrypted key pair
// (cosign.key; pass returns its password, e.g. EnvPassword), a plain PEM
// private key (PKCS#8, SEC 1 or PKCS#1: ECDSA, Ed25519 or RSA), or a KMS
// URI. ECDSA and RSA sign SHA-256 digests; Ed25519 signs the message
// (pure Ed25519, what `cosign verify-blob --key` checks). A key that cannot
// be loaded is a *KeyError; a KMS that cannot be reached an
// *verdict.UnavailableError.
func LoadSigner(ctx context.Context, ref string, pass PassFunc) (sigsig.SignerVerifier, error) {
	k, raw, err := readKey(ctx, ref)
	if err != nil || k != nil {
		return k, err
	}
	sv, err := signerFromPEM(raw, pass)
	if err != nil {
		return nil, &KeyError{Ref: ref, Err: err}
	}
	return sv, nil
}

// readKey returns the KMS key ref names, or else the bytes of the key file.
func readKey(ctx context.Context, ref string) (kms.SignerVerifier, []byte, error) {
	if IsKMS(ref) {
		sv, err := kms.Get(ctx, ref, crypto.SHA256)
		if err != nil {
			return nil, nil, kmsError(ref, err)
		}
		return sv, nil, nil
	}
	raw, err := regfile.Read(ref, maxKeySize)
	if err != nil {
		return nil, nil, &KeyError{Ref: ref, Err: err}
	}
	return nil, raw, nil
}

// maxKeySize bounds a key file, in bytes.
const maxKeySize = 1 << 20

func signerFromPEM(raw []byte, pass PassFunc) (sigsig.SignerVerifier, error) {
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, errors.New("not a PEM file")
	}
	switch block.Type {
	case cosign.CosignPrivateKeyPemType, cosign.SigstorePrivateKeyPemType:
		if pass == nil {
			pass = EnvPassword
		}
		pw, err := pass(false)
		if err != nil {
			return nil, fmt.Errorf("reading the key's password: %w", err)
		}
		// Pure Ed25519 (no load options), as cosign verify-blob checks it.
		sv, err := cosign.LoadPrivateKey(raw, pw, &[]sigsig.LoadOption{})
		if err != nil && strings.Contains(err.Error(), "decrypt") {
			// The password is the only thing a user can get wrong here.
			return nil, fmt.Errorf("the key does not decrypt with the password given: is COSIGN_PASSWORD the key's password? (%w)", err)
		}
		return sv, err
	case "PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY":
		pk, err := cryptoutils.UnmarshalPEMToPrivateKey(raw, cryptoutils.SkipPassword)
		if err != nil {
			return nil, err
		}
		return sigsig.LoadSignerVerifier(pk, crypto.SHA256)
	case "PUBLIC KEY":
		return nil, errors.New("this is a public key; signing needs the private key")
	}
	return nil, fmt.Errorf("unsupported PEM block %q", block.Type)
}

// LoadVerifier loads the public key ref names: a PEM public key
// (cosign.pub) or a KMS URI. A key that cannot be loaded is a *KeyError; a
// KMS that cannot be reached an *verdict.UnavailableError.
func LoadVerifier(ctx context.Context, ref string) (sigsig.Verifier, error) {
	k, raw, err := readKey(ctx, ref)
	if err != nil || k != nil {
		return k, err
	}
	v, err := VerifierFromPEM(raw)
	if err != nil {
		return nil, &KeyError{Ref: ref, Err: err}
	}
	return v, nil
}

// VerifierFromPEM returns a verifier for a PEM public key.
func VerifierFromPEM(raw []byte) (sigsig.Verifier, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(raw)
	if err != nil {
		return nil, fmt.Errorf("not a PEM public key: %w", err)
	}
	return sigsig.LoadVerifier(pub, crypto.SHA256)
}

func kmsError(ref string, err error) error {
	var pnf *kms.ProviderNotFoundError
	if errors.As(err, &pnf) {
		return &KeyError{Ref: ref, Err: fmt.Errorf("this lockstep binary has no KMS provider for %s", ref)}
	}
	return verdict.Unavailable("KMS "+ref, err)
}

// Fingerprint returns "SHA256:" and the hex SHA-256 of the public key's
// PKIX (DER) encoding, a stable name for a key in messages and caches, or
// "unknown key" when the public key cannot be read (see KeyFingerprint).
func Fingerprint(v sigsig.Verifier) string {
	fp, err := KeyFingerprint(v)
	if err != nil {
		return "unknown key"
	}
	return fp
}

// KeyFingerprint is Fingerprint with the error of reading the public key
// (a KMS that cannot be reached).
func KeyFingerprint(v sigsig.Verifier) (string, error) {
	pub, err := v.PublicKey()
	if err != nil {
		return "", err
	}
	der, err := cryptoutils.MarshalPublicKeyToDER(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return "SHA256:" + hex.EncodeToString(sum[:]), nil
}
