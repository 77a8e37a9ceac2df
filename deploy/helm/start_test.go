package helm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/app"
	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
)

// TestRenderedConfigStarts makes lockstep webhook itself the judge of the
// configuration the chart renders: the container's arguments, its
// ConfigMap's variables and the files its ConfigMap volumes mount (under a
// scratch root standing in for /etc/lockstep), with a serving certificate
// where the TLS Secret is mounted, are given to lockstep's own CLI, which
// must accept them and start (its context already cancelled: it stops at
// once, exit 0). A configuration it refuses (two sources, a key it cannot
// load, a routes file it will not parse, keyless without a root) is exit
// 2 here, as it would be a crash-looping webhook in a cluster. Nothing
// leaves loopback: the S3 endpoint is a closed loopback port and the
// manifest URL another.
func TestRenderedConfigStarts(t *testing.T) {
	pub, err := os.ReadFile(filepath.Join("testdata", "cosign.pub"))
	if err != nil {
		t.Fatal(err)
	}
	trustedRoot := sigtest.WriteTrustedRoot(t, sigtest.NewCA(t))
	base := []string{"--set", "store=s3://releases/lockstep", "--set-file", "trust.publicKey=testdata/cosign.pub"}
	for _, tt := range []struct {
		name     string
		values   []string
		existing map[string]map[string]string // ConfigMaps of the user's own: name → key → content
		refused  string                       // in the error when lockstep must refuse it
	}{
		// The control: the kustomize files' placeholder key is refused, so a
		// configuration that starts was judged, not skipped.
		{"the kustomize placeholders", []string{"-f", kustomizeValues}, nil, "not a PEM public key"},
		{"a store, a release, a key", append(base, "--set", "release=store-web"), nil, ""},
		{"routes", append(base, "--set", "routes[0].release=store-web", "--set", "routes[0].namespaces={store,store-canary}",
			"--set", "routes[1].release=payments", "--set", "routes[1].channel=canary", "--set", "routes[1].namespaces={payments}",
			"--set", "routes[1].repositories={registry.example.com/payments/api}"), nil, ""},
		{"a manifest URL, the key in a ConfigMap of one's own", []string{"--set", "manifest=https://127.0.0.1:1/store-web/production.json",
			"--set", "release=store-web", "--set", "trust.existingConfigMap=release-keys", "--set", "webhook.mode=warn", "--set", "refresh=1m"},
			map[string]map[string]string{"release-keys": {"cosign.pub": string(pub)}}, ""},
		{"keyless, offline", []string{"--set", "store=s3://releases/lockstep", "--set", "release=store-web",
			"--set", "trust.keyless.certificateIdentity=https://github.com/acme/web/.github/workflows/release.yml@refs/heads/main",
			"--set-json", `trust.keyless.certificateOidcIssuerRegexp="^https://token\\.actions\\.githubusercontent\\.com$"`,
			"--set-file", "trust.keyless.trustedRoot=" + trustedRoot, "--set", "trust.keyless.offline=true"}, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := render(t, "lockstep", "lockstep", tt.values...)
			if err != nil {
				t.Fatal(err)
			}
			r := decodeRendered(t, "lockstep", raw)
			c := r.consistent(t)
			root := t.TempDir()
			at := func(v string) string { return strings.ReplaceAll(v, "/etc/lockstep/", root+"/etc/lockstep/") }

			// The files the container sees: its ConfigMap volumes, and a
			// serving certificate where its TLS Secret is mounted.
			pod := r.deployment.Spec.Template.Spec
			for _, m := range c.VolumeMounts {
				var v *corev1.Volume
				for i := range pod.Volumes {
					if pod.Volumes[i].Name == m.Name {
						v = &pod.Volumes[i]
					}
				}
				dir := at(m.MountPath + "/")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				switch {
				case v == nil:
					t.Fatalf("volume mount %s names no volume", m.Name)
				case v.Secret != nil:
					pair := tlstest.NewCA(t).ValidFor(t, "lockstep-webhook.lockstep.svc", time.Hour)
					tlstest.WritePair(t, filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), pair)
				case v.ConfigMap != nil:
					data := tt.existing[v.ConfigMap.Name]
					if cm, ok := r.configMaps[v.ConfigMap.Name]; ok {
						data = cm.Data
					}
					for _, it := range v.ConfigMap.Items {
						content, ok := data[it.Key]
						if !ok {
							t.Fatalf("volume %s mounts key %s, which ConfigMap %s lacks", v.Name, it.Key, v.ConfigMap.Name)
						}
						if err := os.WriteFile(filepath.Join(dir, it.Path), []byte(content), 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
			}

			args := []string{"lockstep"}
			for _, a := range c.Args {
				args = append(args, at(a))
			}
			args = append(args, "--listen=127.0.0.1:0")
			for k, v := range c.env {
				t.Setenv(k, at(v))
			}
			// No AWS call leaves loopback, and none finds credentials of the
			// machine's.
			for k, v := range map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_EC2_METADATA_DISABLED": "true",
				"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1",
				"AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull} {
				t.Setenv(k, v)
			}
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			var out bytes.Buffer
			a := app.New()
			a.Writer, a.ErrWriter = &out, &out
			err = a.RunContext(ctx, args)
			if tt.refused != "" {
				if err == nil || app.ExitCode(err) != 2 || !strings.Contains(err.Error(), tt.refused) {
					t.Errorf("lockstep webhook: %v (exit %d), want it refused, exit 2, %q\n%s", err, app.ExitCode(err), tt.refused, out.String())
				}
				return
			}
			if err != nil {
				t.Errorf("lockstep webhook refuses the chart's configuration (exit %d): %v\nargs %q\nenv %v\n%s", app.ExitCode(err), err, args, c.env, out.String())
			}
		})
	}
}
