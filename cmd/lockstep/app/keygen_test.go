package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
)

// unsetPassword unsets COSIGN_PASSWORD for the test.
func unsetPassword(t *testing.T) {
	t.Helper()
	t.Setenv("COSIGN_PASSWORD", "")
	os.Unsetenv("COSIGN_PASSWORD")
}

// TestKeygenWithoutPassword: with COSIGN_PASSWORD unset (in the process:
// this test is serial), keygen and sign refuse, naming it, and write
// nothing.
func TestKeygenWithoutPassword(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "release")
	unsetPassword(t)
	_, stderr, code := lockstepRun(t, "", "keygen", "--output-key-prefix", prefix)
	if code != ExitInvalid || !strings.Contains(stderr, "COSIGN_PASSWORD is not set") {
		t.Errorf("keygen with COSIGN_PASSWORD unset: exit %d, want 2 naming it\n%s", code, stderr)
	}
	if _, err := os.Stat(prefix + ".key"); !os.IsNotExist(err) {
		t.Errorf("a refused keygen wrote a key (%v)", err)
	}
	priv, _ := keyPair(t, dir, "cosign")
	m := writeManifest(t, dir)
	if _, stderr, code := lockstepRun(t, "", "sign", "--key", priv, m); code != ExitInvalid || !strings.Contains(stderr, "COSIGN_PASSWORD is not set") {
		t.Errorf("sign with COSIGN_PASSWORD unset: exit %d, want 2 naming it\n%s", code, stderr)
	}
	if _, err := os.Stat(m + ".sig"); !os.IsNotExist(err) {
		t.Errorf("a sign without a password wrote %s.sig (%v)", m, err)
	}
}

// TestKeygen: keygen writes cosign's encrypted key pair with the run's
// COSIGN_PASSWORD, never over an existing one; lockstep signs and
// verifies with it; a wrong password is named. (Without a password:
// TestKeygenWithoutPassword.)
func TestKeygen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prefix := filepath.Join(dir, "release")
	pw := []string{"COSIGN_PASSWORD=" + sigtest.CosignPassword}

	stdout, stderr, code := lockstepRunIn(t, pw, "keygen", "--output-key-prefix", prefix)
	if code != 0 || stdout != prefix+".key\n"+prefix+".pub\n" {
		t.Fatalf("keygen: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	fi, err := os.Stat(prefix + ".key")
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the private key: %v, mode %v; want 0600", err, fi.Mode())
	}
	before, _ := os.ReadFile(prefix + ".key")
	if !bytes.Contains(before, []byte("ENCRYPTED SIGSTORE PRIVATE KEY")) {
		t.Errorf("the private key is not cosign's encrypted format:\n%s", before)
	}
	if _, stderr, code := lockstepRunIn(t, pw, "keygen", "--output-key-prefix", prefix); code != ExitInvalid || !strings.Contains(stderr, "exists") {
		t.Errorf("keygen over an existing pair: exit %d, want 2\n%s", code, stderr)
	}
	if after, _ := os.ReadFile(prefix + ".key"); !bytes.Equal(before, after) {
		t.Error("keygen overwrote an existing key")
	}

	// lockstep signs and verifies with it; a wrong or missing password is
	// named.
	m := writeManifest(t, dir)
	if _, stderr, code := lockstepRunIn(t, pw, "sign", "--key", prefix+".key", m); code != 0 {
		t.Fatalf("sign with the keygen key: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := lockstepRunIn(t, nil, "manifest", "verify", "--key", prefix+".pub", m); code != 0 {
		t.Errorf("verify with the keygen key: exit %d\n%s", code, stderr)
	}
	os.Remove(m + ".sig")
	if _, stderr, code := lockstepRunIn(t, []string{"COSIGN_PASSWORD=not-" + sigtest.CosignPassword}, "sign", "--key", prefix+".key", m); code != ExitInvalid || !strings.Contains(stderr, "is COSIGN_PASSWORD the key's password?") {
		t.Errorf("sign with a wrong COSIGN_PASSWORD: exit %d, want 2 naming it\n%s", code, stderr)
	}
	if _, err := os.Stat(m + ".sig"); !os.IsNotExist(err) {
		t.Errorf("a sign with a wrong password wrote %s.sig (%v)", m, err)
	}
}

// TestKeygenCosignInterop shows both ways with the real cosign CLI:
// cosign signs with lockstep's key pair and lockstep verifies, and
// lockstep signs with cosign's key pair and cosign verifies.
func TestKeygenCosignInterop(t *testing.T) {
	t.Parallel()
	cosign := sigtest.RequireCosign(t)
	// cosign's children get the password from sigtest.
	pw := []string{"COSIGN_PASSWORD=" + sigtest.CosignPassword}

	ours := t.TempDir()
	if _, stderr, code := lockstepRunIn(t, pw, "keygen", "--output-key-prefix", filepath.Join(ours, "cosign")); code != 0 {
		t.Fatalf("keygen: exit %d\n%s", code, stderr)
	}
	m := writeManifest(t, ours)
	cosign.MustRun(t, ours, "sign-blob", "--key", "cosign.key", "--tlog-upload=false", "--output-signature", "release.json.sig", "-y", m)
	if _, stderr, code := lockstepRunIn(t, pw, "manifest", "verify", "--key", filepath.Join(ours, "cosign.pub"), m); code != 0 {
		t.Errorf("lockstep verify of cosign's signature with lockstep's key pair: exit %d\n%s", code, stderr)
	}
	os.WriteFile(m, append(mustRead(t, m), '\n'), 0o644)
	if _, _, code := lockstepRunIn(t, pw, "manifest", "verify", "--key", filepath.Join(ours, "cosign.pub"), m); code != ExitMismatch {
		t.Errorf("lockstep verify over other bytes: exit %d, want 1", code)
	}

	theirs := t.TempDir()
	priv, pub := cosign.GenerateKeyPair(t, theirs)
	m = writeManifest(t, theirs)
	if _, stderr, code := lockstepRunIn(t, pw, "sign", "--key", priv, m); code != 0 {
		t.Fatalf("lockstep sign with cosign's key pair: exit %d\n%s", code, stderr)
	}
	cosign.MustRun(t, theirs, "verify-blob", "--key", pub, "--signature", m+".sig", "--insecure-ignore-tlog", m)
	// The keygen public key is not cosign's: cosign refuses it.
	if out, err := cosign.Run(theirs, "verify-blob", "--key", filepath.Join(ours, "cosign.pub"), "--signature", m+".sig", "--insecure-ignore-tlog", m); err == nil {
		t.Errorf("cosign verified with another key:\n%s", out)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
