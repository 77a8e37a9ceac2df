// Package sigtest makes signing material for tests: in-memory keys, and a
// certificate authority that issues Fulcio-style certificates (a SAN
// identity and the OIDC-issuer extension), with a Sigstore trusted root
// that names it, so that keyless verification is tested offline.
package sigtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
)

// Key returns a new in-memory ECDSA P-256 signer, cosign's default kind.
func Key(t testing.TB) sigsig.SignerVerifier {
	t.Helper()
	sv, err := sigsig.LoadSignerVerifier(tlstest.NewKey(t), crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return sv
}

// PublicPEM returns the PEM of sv's public key.
func PublicPEM(t testing.TB, sv sigsig.PublicKeyProvider) []byte {
	t.Helper()
	pub, err := sv.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	b, err := cryptoutils.MarshalPublicKeyToPEM(pub)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Fulcio's OIDC-issuer extensions: V1 holds the raw string (what cosign's
// image verification reads), V2 a DER UTF8String (what sigstore-go reads).
// Fulcio writes both.
var (
	OIDIssuerV1 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}
	OIDIssuerV2 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}
)

// CA is a test certificate authority: a root and an intermediate, as
// Fulcio has, made with tlstest (the tests' one PKI).
type CA struct {
	Root, Intermediate *x509.Certificate
	inter              *tlstest.CA
}

// NewCA returns a new CA valid from an hour ago for a day.
func NewCA(t testing.TB) *CA {
	t.Helper()
	root := tlstest.NewCAFrom(t, caTemplate(1, "lockstep test root"))
	tmpl := caTemplate(2, "lockstep test intermediate")
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}
	tmpl.MaxPathLen, tmpl.MaxPathLenZero = 0, true
	inter := root.NewIntermediate(t, tmpl)
	return &CA{Root: root.Cert, Intermediate: inter.Cert, inter: inter}
}

// caTemplate is the template of a Fulcio-like CA certificate valid from an
// hour ago for a day.
func caTemplate(serial int64, cn string) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"sigstore.dev"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
}

// Leaf issues a short-lived code-signing certificate for a new key, with
// identity as its SAN (an email, or a URI when it has a scheme) and issuer
// in the Fulcio OIDC-issuer extensions. It returns the key and the
// certificate.
func (ca *CA) Leaf(t testing.TB, identity, issuer string) (sigsig.SignerVerifier, *x509.Certificate) {
	t.Helper()
	k, cert := ca.LeafKey(t, identity, issuer)
	sv, err := sigsig.LoadSignerVerifier(k, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return sv, cert
}

// LeafKey is Leaf with the private key itself, for a tool that reads it
// from a file (cosign import-key-pair).
func (ca *CA) LeafKey(t testing.TB, identity, issuer string) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	ext, err := asn1.MarshalWithParams(issuer, "utf8")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:    big.NewInt(now.UnixNano()),
		NotBefore:       now.Add(-time.Minute),
		NotAfter:        now.Add(time.Hour),
		KeyUsage:        x509.KeyUsageDigitalSignature,
		ExtKeyUsage:     []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		ExtraExtensions: []pkix.Extension{{Id: OIDIssuerV1, Value: []byte(issuer)}, {Id: OIDIssuerV2, Value: ext}},
	}
	if strings.Contains(identity, "://") {
		u, err := url.Parse(identity)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = []*url.URL{u}
	} else {
		tmpl.EmailAddresses = []string{identity}
	}
	cert, k := ca.inter.Issue(t, tmpl)
	return k, cert
}

// ChainPEM returns the PEM of the intermediate and the root, the chain
// cosign stores beside a certificate.
func (ca *CA) ChainPEM(t testing.TB) []byte {
	t.Helper()
	b, err := cryptoutils.MarshalCertificatesToPEM([]*x509.Certificate{ca.Intermediate, ca.Root})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TrustedRoot returns a Sigstore trusted root naming the CAs as Fulcio
// certificate authorities (no logs, no timestamp authorities).
func TrustedRoot(t testing.TB, cas ...*CA) *root.TrustedRoot {
	t.Helper()
	var authorities []root.CertificateAuthority
	for _, ca := range cas {
		authorities = append(authorities, &root.FulcioCertificateAuthority{
			Root:                ca.Root,
			Intermediates:       []*x509.Certificate{ca.Intermediate},
			ValidityPeriodStart: ca.Root.NotBefore,
			ValidityPeriodEnd:   ca.Root.NotAfter,
			URI:                 "https://fulcio.test",
		})
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, authorities, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// WriteTrustedRoot writes TrustedRoot(cas...) as trusted_root.json in a
// temporary directory and returns its path.
func WriteTrustedRoot(t testing.TB, cas ...*CA) string {
	t.Helper()
	b, err := TrustedRoot(t, cas...).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// CertPEM returns the PEM of cert.
func CertPEM(t testing.TB, cert *x509.Certificate) []byte {
	t.Helper()
	b, err := cryptoutils.MarshalCertificateToPEM(cert)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
