package app

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/manifest"
)

// TestAttackNumericHosts extends class 5 (names) with the numeric
// spellings of an IPv4 address that inet_aton, and so glibc's resolver,
// accepts (issue 35, item 4): shortened, decimal, hex, octal, padded and
// mixed. The webhook, run by the CLI with --unmanaged allow (where a
// spelling that escaped governance would be admitted as unmanaged), must
// govern each as its dotted quad, and refuse a host that ends in a number
// without being an address.
func TestAttackNumericHosts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key, pool := webhookTestCert(t, dir)
	addr := loopbackAddr(t)
	web := "registry.lockstep.test/store/web"
	_, raw, err := scenario.Manifest("store-web", 5, []manifest.Image{
		{Name: "web", Ref: web + ":v1", Repository: web, Tag: "v1", Digest: atkIndex, MediaType: "application/vnd.oci.image.index.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: atkAmd64, Config: atkAmd64Conf}}},
		{Name: "local", Ref: "127.0.0.1:5000/store/local:v1", Repository: "127.0.0.1:5000/store/local", Tag: "v1", Digest: atkSingle, MediaType: "application/vnd.oci.image.manifest.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: atkSingle, Config: atkSingleCfg}}},
		{Name: "edge", Ref: "10.20.30.40:5000/store/edge:v1", Repository: "10.20.30.40:5000/store/edge", Tag: "v1", Digest: atkIndex, MediaType: "application/vnd.oci.image.index.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: atkAmd64, Config: atkAmd64Conf}}},
	}, []string{"https://cdn.invalid/static/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	man := filepath.Join(dir, "release.json")
	if err := os.WriteFile(man, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	// 10.9.8.7 is an alias of the governed registry, written in hex.
	client := serveWebhook(t, addr, pool, "--tls-cert", cert, "--tls-key", key, "--manifest", man, "--release", "store-web",
		"--insecure-allow-unsigned", "--unmanaged", "allow", "--registry-alias", "0xa.9.0x807=registry.lockstep.test")

	other := "sha256:" + strings.Repeat("ee", 32)
	pod := func(image string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"store"},"spec":{"containers":[{"name":"c","image":%q}]}}`, image)
	}
	podKind := `{"group":"","version":"v1","kind":"Pod"}`
	notPinned, mismatch, invalid := "is not pinned by digest", "is not one of release", "not a valid image reference"
	cases := []struct{ name, image, want string }{
		{"shortened 127.1", "127.1:5000/store/local:v1", notPinned},
		{"shortened 127.0.1", "127.0.1:5000/store/local@" + other, mismatch},
		{"decimal 2130706433", "2130706433:5000/store/local:v1", notPinned},
		{"hex 0x7f000001", "0x7f000001:5000/store/local@" + other, mismatch},
		{"hex in upper case 0X7F000001", "0X7F000001:5000/store/local:v1", notPinned},
		{"hex parts 0x7f.1", "0x7f.1:5000/store/local@" + other, mismatch},
		{"octal 0177.0.0.1", "0177.0.0.1:5000/store/local:v1", notPinned},
		{"padded 127.000.000.001", "127.000.000.001:5000/store/local@" + other, mismatch},
		{"mixed 0x7f.0.00.01", "0x7f.0.00.01:5000/store/local:v1", notPinned},
		{"another loopback, decimal", "2130706434:5000/store/local@" + other, mismatch},
		{"a private address shortened 10.20.7720", "10.20.7720:5000/store/edge:v1", notPinned},
		{"a private address in octal", "012.024.036.050:5000/store/edge@" + other, mismatch},
		{"a private address in decimal", "169090600:5000/store/edge:v1", notPinned},
		{"an alias written in hex, spelled in decimal", "168364039:443/store/web@" + other, mismatch},
		{"an alias written in hex, spelled shortened on 443", "10.9.2055:443/store/web:v1", notPinned},
		{"five parts", "127.0.0.0.1:5000/store/local:v1", invalid},
		{"a part over 255", "127.256.0.1:5000/store/local:v1", invalid},
		{"8 in an octal part", "0178.0.0.1:5000/store/local@" + atkSingle.String(), invalid},
		{"a decimal over 32 bits", "4294967296:5000/store/local@" + atkSingle.String(), invalid},
		{"a hex label that ends the name", "registry.0x7f:5000/store/local@" + atkSingle.String(), invalid},
	}
	for i, tt := range cases {
		t.Run("class 5/"+tt.name, func(t *testing.T) {
			allowed, msg := postReview(t, client, addr, fmt.Sprintf("h%d", i), podKind, "", pod(tt.image))
			if allowed || !strings.Contains(msg, tt.want) {
				t.Errorf("%s: allowed %v, message %q; want a denial saying %q", tt.image, allowed, msg, tt.want)
			}
		})
	}
	// The control: the pinned governed images under numeric spellings are
	// admitted, as under their dotted quads.
	for _, im := range []string{"0x7f.1:5000/store/local@" + atkSingle.String(), "2130706433:5000/store/local@" + atkSingle.String(),
		"10.20.7720:5000/store/edge@" + atkAmd64.String(), "168364039:443/store/web@" + atkIndex.String()} {
		if allowed, msg := postReview(t, client, addr, "ok", podKind, "", pod(im)); !allowed {
			t.Errorf("control %s: denied: %s", im, msg)
		}
	}
	// A numeric alias that is no address is exit 2 before anything is
	// served; one that is an address in another spelling of the same host
	// maps a host to itself.
	for _, a := range []string{"1.2.3.4.5=registry.lockstep.test", "registry.lockstep.test=0x100000000", "127.1=localhost"} {
		if code, _, errs := run(t, "webhook", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--manifest", man, "--release", "store-web",
			"--insecure-allow-unsigned", "--registry-alias", a); code != 2 || !strings.Contains(errs, "registry alias") {
			t.Errorf("class 5/--registry-alias %q: exit %d, %s; want 2", a, code, errs)
		}
	}
}

// serveWebhook runs `lockstep webhook --listen addr args...` for the life
// of the test and returns a client that trusts pool, once it is ready.
func serveWebhook(t *testing.T, addr string, pool *x509.CertPool, args ...string) *http.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		code, _ := runWebhookCLI(ctx, append([]string{"webhook", "--listen", addr}, args...)...)
		done <- code
	}()
	t.Cleanup(func() { cancel(); <-done })
	client := webhookClient(pool)
	waitReady(t, client, "https://"+addr+"/readyz", exitedOf(done))
	return client
}
