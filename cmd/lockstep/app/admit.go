package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/gate"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/atomicfile"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/internal/transport/ggcrretry"
)

// checkFlags are the flags of an admission check, beside sourceFlags and
// trustFlags: what every command that runs admission.Check (admit, the
// agent) takes. They include stateFlags (--state-dir, --max-age): the
// trusted state is part of every check.
func checkFlags() []cli.Flag {
	return append(append(stateFlags(),
		&cli.StringFlag{Name: "image", Usage: "the manifest image role this instance runs (default: the manifest's only image)", EnvVars: []string{"LOCKSTEP_IMAGE"}},
		&cli.StringFlag{Name: "running", Usage: "where the running digest comes from: docker[:CONTAINER], containerd[:[NAMESPACE/]CONTAINER], cri[:[POD/]CONTAINER], ecs[:CONTAINER], file:PATH or digest:sha256:HEX", EnvVars: []string{"LOCKSTEP_RUNNING"}},
		&cli.StringFlag{Name: "platform", Usage: "the instance's platform os/arch[/variant] (default: this binary's)"},
		&cli.StringSliceFlag{Name: "probe", Usage: "a page of the instance to probe for served assets (repeatable)", EnvVars: []string{"LOCKSTEP_PROBE"}},
		&cli.IntFlag{Name: "sample", Usage: "check this many more manifest assets on the CDN, drawn at random"},
		&cli.BoolFlag{Name: "all-assets", Usage: "check every manifest asset on the CDN"},
		&cli.StringSliceFlag{Name: "allow-host", Usage: "a third-party `HOST` (host, host:port or *.domain) pages may reference, unchecked (repeatable); any other host that is neither a CDN base nor the instance refuses", EnvVars: []string{"LOCKSTEP_ALLOW_HOST"}},
		&cli.BoolFlag{Name: "asset-free-page", Usage: "the probed pages reference no asset, and that is expected: accept such a page (without it a page that references no asset proves nothing and refuses)", EnvVars: []string{"LOCKSTEP_ASSET_FREE_PAGE"}},
		allowLinkLocalFlag(),
		&cli.DurationFlag{Name: "timeout", Value: admission.DefaultTimeout, Usage: "the deadline of a check (for admit: of the whole gate, acting included)"},
		&cli.DurationFlag{Name: "tls-warn", Value: admission.DefaultTLSWarning, Usage: "warn of a certificate, of any endpoint the check touches, that expires within this (an expired or invalid one refuses)", EnvVars: []string{"LOCKSTEP_TLS_WARN"}},
		&cli.BoolFlag{Name: "require-image-signature", Usage: "verify the cosign signatures of the image this instance runs (the gate's platform must be signed), from the material embedded in the manifest, else from the registry", EnvVars: []string{"LOCKSTEP_REQUIRE_IMAGE_SIGNATURE"}},
		&cli.BoolFlag{Name: "require-embedded-signatures", Usage: "verify image signatures from the manifest's embedded material only: a manifest that embeds none for the image is refused, the registry never asked (implies --require-image-signature)", EnvVars: []string{"LOCKSTEP_REQUIRE_EMBEDDED_SIGNATURES"}},
	), imageSignatureFlags()...)
}

func admitCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "report", Usage: "also write the JSON decision to `FILE` (atomically)"},
		formatFlag("text", "json"),
		&cli.BoolFlag{Name: "dry-run", Usage: "decide and report, but complete no lifecycle action, register nothing, record no state"},
		&cli.StringFlag{Name: "lifecycle-hook", Usage: "complete this Auto Scaling lifecycle hook's action: CONTINUE when admitted, ABANDON otherwise", EnvVars: []string{"LOCKSTEP_LIFECYCLE_HOOK"}},
		&cli.StringFlag{Name: "asg", Usage: "the Auto Scaling group of --lifecycle-hook", EnvVars: []string{"LOCKSTEP_ASG"}},
		&cli.DurationFlag{Name: "heartbeat-interval", Value: gate.DefaultHeartbeatInterval, Usage: "how often to record a lifecycle heartbeat while checking"},
		&cli.StringFlag{Name: "target-group", Usage: "register the instance with this ELBv2 target group `ARN` when admitted", EnvVars: []string{"LOCKSTEP_TARGET_GROUP"}},
		&cli.IntFlag{Name: "target-port", Usage: "the port to register with --target-group (default: the group's)"},
		&cli.StringFlag{Name: "instance-id", Usage: "the EC2 instance ID (default: from IMDSv2)"},
		&cli.StringFlag{Name: "region", Usage: "the AWS region (default: from IMDSv2)", EnvVars: []string{"AWS_REGION"}},
	}
	return &cli.Command{
		Name:  "admit",
		Usage: "the boot gate: admit this instance only if it runs the release and serves its assets",
		UsageText: "lockstep admit (--manifest SRC --release NAME | --store URL --release NAME [--channel NAME]) --image NAME --running SOURCE\n" +
			"   [--state-dir DIR] [--max-age D] [--probe URL...] [--sample N|--all-assets] [--report FILE] [--format text|json] [--dry-run]",
		Flags:  slices.Concat(sourceFlags(), trustFlags(), checkFlags(), flags),
		Action: runAdmit,
	}
}

func runAdmit(c *cli.Context) error {
	f, err := format(c, "text", "json")
	if err != nil {
		return err
	}
	cfg, err := admitConfig(c)
	if err != nil {
		return err
	}
	d := gate.Run(c.Context, cfg)
	if path := c.String("report"); path != "" {
		b, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return err
		}
		if err := atomicfile.Write(path, append(b, '\n'), 0o644); err != nil {
			// The decision stands; the report is lost: say so, fail closed.
			renderDecision(c.App.Writer, f, d)
			return unverified(fmt.Errorf("writing the report: %w", err))
		}
	}
	if err := renderDecision(c.App.Writer, f, d); err != nil {
		return err
	}
	switch {
	case d.Allowed:
		return nil
	case d.Misconfigured():
		return usage(fmt.Errorf("refused: %s: give --image one of the manifest's images", admitKinds(d)))
	case d.Unverified:
		return unverified(fmt.Errorf("refused: could not verify (%s)", admitKinds(d)))
	}
	return refused(fmt.Errorf("refused: %s", admitKinds(d)))
}

// checkFromFlags turns sourceFlags, trustFlags and checkFlags into an
// admission check whose requests go through client: the manifest source
// (with the trusted cache's --max-age fallback) and, as its guard, the
// trusted state, which refuses rollbacks and records what was admitted.
func checkFromFlags(c *cli.Context, client *transport.Client) (admission.Config, error) {
	if c.String("running") == "" {
		return admission.Config{}, usage(errors.New("--running is required: docker[:CONTAINER], containerd[:[NAMESPACE/]CONTAINER], cri[:[POD/]CONTAINER], ecs[:CONTAINER], file:PATH or digest:sha256:HEX"))
	}
	if c.Int("sample") < 0 {
		return admission.Config{}, usage(errors.New("--sample must not be negative"))
	}
	if c.Int("sample") > 0 && c.Bool("all-assets") {
		return admission.Config{}, usage(errors.New("--sample and --all-assets are exclusive"))
	}
	if p := c.String("platform"); p != "" {
		if parts := strings.Split(p, "/"); len(parts) < 2 || len(parts) > 3 || slices.Contains(parts, "") {
			return admission.Config{}, usage(fmt.Errorf("--platform %q: want os/arch[/variant], e.g. linux/amd64", p))
		}
	}
	if c.Duration("timeout") <= 0 || c.Duration("tls-warn") <= 0 {
		return admission.Config{}, usage(errors.New("--timeout and --tls-warn must be positive"))
	}
	verifier, insecure, err := verifierFromFlags(c)
	if err != nil {
		return admission.Config{}, err
	}
	images, err := imageSignaturesFromFlags(c, client)
	if err != nil {
		return admission.Config{}, err
	}
	rs, err := running.Parse(c.String("running"), running.Options{
		DockerHost:        os.Getenv("DOCKER_HOST"),
		ContainerdAddress: os.Getenv("CONTAINERD_ADDRESS"),
		CRIEndpoint:       os.Getenv("CONTAINER_RUNTIME_ENDPOINT"),
		ECSMetadataURI:    os.Getenv("ECS_CONTAINER_METADATA_URI_V4"),
		DefaultContainer:  c.String("image"),
		Client:            client,
	})
	if err != nil {
		return admission.Config{}, usage(err)
	}
	// Last: it opens (creates) the state directory.
	src, state, err := trustedSourceFromFlags(c, client)
	if err != nil {
		return admission.Config{}, err
	}
	return admission.Config{
		Source: src, Guard: state, Verifier: verifier, AllowUnsigned: insecure,
		ImageSignatures: images, RequireEmbeddedSignatures: c.Bool("require-embedded-signatures"),
		TLSWarning: c.Duration("tls-warn"),
		Image:      c.String("image"), Running: rs, Platform: c.String("platform"),
		Probes: c.StringSlice("probe"), Sample: c.Int("sample"), AllAssets: c.Bool("all-assets"),
		AllowHosts: c.StringSlice("allow-host"), AssetFreePages: c.Bool("asset-free-page"),
		Client: client, Timeout: c.Duration("timeout"), Logger: logger(c),
	}, nil
}

// imageSignaturesFromFlags is the image-signature verifier of
// --require-image-signature (or --require-embedded-signatures), nil
// without: imageVerifierFromFlags for the gate's platform, reading the
// registry (when the manifest embeds nothing) through client.
func imageSignaturesFromFlags(c *cli.Context, client *transport.Client) (admission.ImageVerifier, error) {
	if !c.Bool("require-image-signature") && !c.Bool("require-embedded-signatures") {
		return nil, nil
	}
	platform := c.String("platform")
	if platform == "" {
		platform = admission.DefaultPlatform()
	}
	remoteOpts := append(ggcrretry.Options(client), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	v, err := imageVerifierFromFlags(c, []string{platform}, remoteOpts)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// admitConfig turns the flags into a gate.
func admitConfig(c *cli.Context) (gate.Config, error) {
	if (c.String("lifecycle-hook") == "") != (c.String("asg") == "") {
		return gate.Config{}, usage(errors.New("--lifecycle-hook and --asg go together"))
	}
	client, err := admitClient(gateOptions(c)...)
	if err != nil {
		return gate.Config{}, err
	}
	// The AWS APIs are reached on a client of their own: the instance
	// metadata service (IMDS) is link-local by nature.
	awsClient, err := admitClient()
	if err != nil {
		return gate.Config{}, err
	}
	check, err := checkFromFlags(c, client)
	if err != nil {
		return gate.Config{}, err
	}
	cfg := gate.Config{
		Check:         check,
		LifecycleHook: c.String("lifecycle-hook"), AutoScalingGroup: c.String("asg"),
		TargetGroup: c.String("target-group"), TargetPort: int32(c.Int("target-port")),
		InstanceID: c.String("instance-id"), Region: c.String("region"),
		HeartbeatInterval: c.Duration("heartbeat-interval"),
		DryRun:            c.Bool("dry-run"), Logger: logger(c),
	}
	if cfg.LifecycleHook != "" || cfg.TargetGroup != "" {
		cfg.Connect = func(ctx context.Context, region string) (gate.Clients, error) {
			ac, err := admitAWSConfig(ctx, awsClient, awsconfig.WithRegion(region))
			if err != nil {
				return gate.Clients{}, err
			}
			as := autoscaling.NewFromConfig(ac)
			return gate.Clients{Completer: as, Heartbeater: as, Registrar: elbv2.NewFromConfig(ac)}, nil
		}
		if cfg.InstanceID == "" || cfg.Region == "" {
			ac, err := admitAWSConfig(c.Context, awsClient)
			if err != nil {
				return gate.Config{}, unverified(err)
			}
			cfg.Metadata = imds.NewFromConfig(ac)
		}
	}
	return cfg, nil
}

// admitClient is the transport of the gate, with opts. It honours
// AWS_CA_BUNDLE, as the AWS SDK would, for every endpoint.
func admitClient(opts ...transport.Option) (*transport.Client, error) {
	bundle := os.Getenv("AWS_CA_BUNDLE")
	if bundle == "" {
		return transport.New(transport.DefaultPolicy(), opts...), nil
	}
	pem, err := os.ReadFile(bundle)
	if err != nil {
		return nil, usage(fmt.Errorf("AWS_CA_BUNDLE: %w", err))
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return nil, usage(fmt.Errorf("AWS_CA_BUNDLE %s holds no PEM certificate", bundle))
	}
	return transport.New(transport.DefaultPolicy(), append(opts, transport.WithTLSConfig(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}))...), nil
}

// admitAWSConfig loads the AWS configuration with the gate's transport as
// HTTP client and the shared retry policy. When AWS_CA_BUNDLE is set the
// SDK refuses a custom HTTP client at load time (it wants to add the
// bundle itself), so the client, which already trusts the bundle, is set
// after loading.
func admitAWSConfig(ctx context.Context, client *transport.Client, opts ...func(*awsconfig.LoadOptions) error) (aws.Config, error) {
	hc := &http.Client{Transport: client.Transport()}
	opts = append(opts, awsconfig.WithRetryer(func() aws.Retryer { return gate.Retryer(client.Policy()) }))
	if os.Getenv("AWS_CA_BUNDLE") == "" {
		opts = append(opts, awsconfig.WithHTTPClient(hc))
	}
	ac, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	ac.HTTPClient = hc
	return ac, nil
}

func admitKinds(d admission.Decision) string {
	var ks []string
	seen := map[admission.Kind]bool{}
	for _, f := range d.Refusals() {
		if !seen[f.Kind] {
			seen[f.Kind] = true
			ks = append(ks, string(f.Kind))
		}
	}
	return strings.Join(ks, ", ")
}

// renderDecision writes the decision as text or JSON.
func renderDecision(w io.Writer, format string, d admission.Decision) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	}
	var b strings.Builder
	verdict := "ADMITTED"
	switch {
	case !d.Allowed && d.Unverified:
		verdict = "REFUSED (could not verify)"
	case !d.Allowed:
		verdict = "REFUSED"
	}
	if d.DryRun {
		verdict += " [dry run]"
	}
	fmt.Fprintf(&b, "%s", verdict)
	if d.Release != "" {
		fmt.Fprintf(&b, " against %s@%d (%s)", d.Release, d.Generation, d.ManifestDigest)
	}
	b.WriteString("\n")
	if !d.ManifestCachedAt.IsZero() {
		fmt.Fprintf(&b, "  manifest  from the trusted cache, accepted %s: the store could not be reached\n", d.ManifestCachedAt.UTC().Format(time.RFC3339))
	}
	if d.Unsigned {
		b.WriteString("  manifest  UNSIGNED: accepted without signature verification\n")
	}
	if d.Running != nil {
		fmt.Fprintf(&b, "  running   %s %s", d.Running.Source, orDash(d.RunningDigest.String()))
		if d.Match != "" {
			fmt.Fprintf(&b, " (matches the %s digest of image %s for %s)", d.Match, d.Image, d.Platform)
		}
		b.WriteString("\n")
	}
	switch d.ImageSignature {
	case admission.SignaturesEmbedded:
		fmt.Fprintf(&b, "  signature image %s: from the manifest's embedded material (no registry request)\n", d.Image)
	case admission.SignaturesRegistry:
		fmt.Fprintf(&b, "  signature image %s: from the registry (the manifest embeds no signature material)\n", d.Image)
	}
	if len(d.Served) > 0 {
		fmt.Fprintf(&b, "  served    %d assets, fingerprint %s\n", len(d.Served), d.ServedFingerprint)
	}
	if d.CDNChecked > 0 {
		fmt.Fprintf(&b, "  cdn       %d checks\n", d.CDNChecked)
	}
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "  %-6s %s", f.Severity, f.Kind)
		if f.Subject != "" {
			fmt.Fprintf(&b, " [%s]", f.Subject)
		}
		fmt.Fprintf(&b, ": %s\n", f.Message)
	}
	for _, a := range d.Actions {
		fmt.Fprintf(&b, "  action    %s %s", a.Kind, a.Target)
		if a.Result != "" {
			fmt.Fprintf(&b, " %s", a.Result)
		}
		fmt.Fprintf(&b, ": %s", a.Status)
		if a.Heartbeats > 0 {
			fmt.Fprintf(&b, " (%d heartbeats)", a.Heartbeats)
		}
		if a.Error != "" {
			fmt.Fprintf(&b, " (%s)", a.Error)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  %d requests in %s", d.Requests, d.Duration.Round(time.Millisecond))
	if d.Waited > 0 {
		fmt.Fprintf(&b, ", %s of it waiting for the app to come up", d.Waited.Round(time.Millisecond))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
