package sigtest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/lockstep-dev/lockstep/manifest/signature"
)

// CosignPassword is the password of the key pairs GenerateCosignKeyPair
// makes.
const CosignPassword = "lockstep-test"

// Cosign is the real cosign CLI, for interop tests.
type Cosign struct {
	Path string
	home string
}

// RequireCosign returns the cosign CLI named by $LOCKSTEP_TEST_COSIGN, or
// skips the test (fails it under LOCKSTEP_INTEGRATION=1: scripts/test.sh
// builds cosign into .cache/bin).
func RequireCosign(t testing.TB) *Cosign {
	t.Helper()
	p := os.Getenv("LOCKSTEP_TEST_COSIGN")
	if p != "" {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return &Cosign{Path: p, home: t.TempDir()}
		}
	}
	if os.Getenv("LOCKSTEP_INTEGRATION") == "1" {
		t.Fatalf("the cosign CLI is not at $LOCKSTEP_TEST_COSIGN (%q); scripts/test.sh builds it", p)
	}
	t.Skip("set LOCKSTEP_TEST_COSIGN to a cosign v2 binary to run the interop tests")
	return nil
}

// Run runs cosign in dir and returns its combined output and error. It
// never reaches past loopback: the TUF mirror is a closed loopback port
// with an empty cache (cosign then skips TUF), and no Rekor, Fulcio or CT
// call is asked for.
func (c *Cosign) Run(dir string, args ...string) (string, error) {
	cmd := exec.Command(c.Path, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"COSIGN_PASSWORD="+CosignPassword,
		"HOME="+c.home,
		"TUF_ROOT="+filepath.Join(c.home, "tuf"),
		"TUF_MIRROR=http://127.0.0.1:9",
		"SIGSTORE_NO_CACHE=true",
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// MustRun is Run that fails the test on error.
func (c *Cosign) MustRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := c.Run(dir, args...)
	if err != nil {
		t.Fatalf("cosign %v: %v\n%s", args, err, out)
	}
	return out
}

// GenerateKeyPair runs `cosign generate-key-pair` in dir (password
// CosignPassword) and returns the paths of cosign.key and cosign.pub.
func (c *Cosign) GenerateKeyPair(t testing.TB, dir string) (priv, pub string) {
	t.Helper()
	c.MustRun(t, dir, "generate-key-pair")
	return filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
}

// Verifier runs `cosign generate-key-pair` in dir, as GenerateKeyPair,
// and returns the public key loaded as lockstep loads --key.
func (c *Cosign) Verifier(t testing.TB, dir string) sigsig.Verifier {
	t.Helper()
	_, pub := c.GenerateKeyPair(t, dir)
	v, err := signature.LoadVerifier(context.Background(), pub)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
