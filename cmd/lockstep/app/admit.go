package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

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
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/internal/transport/ggcrretry"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

func admitCommand(inv *invocation) *cli.Command {
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
			"   [--state-dir DIR] [--max-age D] [--probe URL...] [--sample N|--all-assets] [--max-closure N] [--report FILE] [--format text|json] [--dry-run]",
		Description: describe("Fetches the release manifest and verifies its signature, asks the container runtime which\n"+
			"image is actually running (by digest, never by tag), probes the instance's own pages for the assets it\n"+
			"actually serves, checks them and what they load (their closure by the manifest's asset graph) against\n"+
			"the manifest and the CDN, and on the instance those it serves itself, and acts: completes the Auto Scaling\n"+
			"lifecycle action (CONTINUE or ABANDON), registers the instance with a target group only when admitted,\n"+
			"or just exits non-zero. Fails closed: what could not be checked refuses.",
			[]string{
				"lockstep admit --store s3://releases/lockstep --release store-web --key /etc/lockstep/cosign.pub \\\n" +
					"  --image web --running docker:app --probe http://127.0.0.1:8080/",
				"lockstep admit --manifest https://releases.example.com/store-web/production.json --release store-web \\\n" +
					"  --key /etc/lockstep/cosign.pub --running docker:app --probe http://127.0.0.1:8080/ \\\n" +
					"  --lifecycle-hook lockstep-boot-gate --asg store-web --report /run/lockstep/admit.json",
				"lockstep admit --store s3://releases/lockstep --release store-web --key cosign.pub --running ecs:web \\\n" +
					"  --dry-run --format json",
				"lockstep admit --store s3://releases/lockstep --release store-web --key /etc/lockstep/cosign.pub \\\n" +
					"  --running docker:app --require-provenance --provenance-key /etc/lockstep/builder.pub",
			},
			exits{
				0: "admitted",
				1: "refused: a mismatch (a wrong digest, an asset the manifest or the CDN lacks, an expired, invalid or " +
					"rolled-back manifest, a bad signature, a provenance not of the release's source); when a mismatch and an unreachable dependency meet, exit 1",
				2: "a usage error: nothing was checked (with a lifecycle hook, its DefaultResult applies)",
				3: "refused because something could not be checked (a dependency down, the deadline reached, a closure over --max-closure)",
			}),
		Flags:  append(consumerFlags(), flags...),
		Action: inv.act(runAdmit),
	}
}

func runAdmit(c *cli.Context, inv *invocation) error {
	f, err := format(c, "text", "json")
	if err != nil {
		return err
	}
	cfg, err := admitConfig(c.Context, c, inv)
	if err != nil {
		return err
	}
	d := gate.Run(c.Context, cfg)
	if path := c.String("report"); path != "" {
		if err := d.WriteFile(path); err != nil {
			// The decision stands; the report is lost: say so, fail closed.
			d.Write(c.App.Writer, f)
			return unverified(fmt.Errorf("writing the report: %w", err))
		}
	}
	if err := d.Write(c.App.Writer, f); err != nil {
		return err
	}
	return admitExit(d)
}

// admitExit is the exit of a decision: nil when admitted, else a refusal
// naming its kinds, exit 2 for a check misconfigured, 3 for one that
// could not verify, 1 otherwise.
func admitExit(d admission.Decision) error {
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
// (with the trusted cache's --max-age fallback), which is also the check's
// guard by its trusted state: it refuses rollbacks and records what was
// admitted.
func checkFromFlags(ctx context.Context, c flagValues, inv *invocation, client *transport.Client) (admission.Config, error) {
	if c.String("running") == "" {
		return admission.Config{}, usage(errors.New("--running is required: docker[:CONTAINER], containerd[:[NAMESPACE/]CONTAINER], cri[:[POD/]CONTAINER], ecs[:CONTAINER], file:PATH or digest:sha256:HEX"))
	}
	if c.Int("sample") < 0 {
		return admission.Config{}, usage(errors.New("--sample must not be negative"))
	}
	if c.Int("sample") > 0 && c.Bool("all-assets") {
		return admission.Config{}, usage(errors.New("--sample and --all-assets are exclusive"))
	}
	if c.Int("max-closure") <= 0 {
		return admission.Config{}, usage(errors.New("--max-closure must be positive"))
	}
	if c.Int("max-references") <= 0 {
		return admission.Config{}, usage(errors.New("--max-references must be positive"))
	}
	if p := c.String("platform"); p != "" {
		if parts := strings.Split(p, "/"); len(parts) < 2 || len(parts) > 3 || slices.Contains(parts, "") {
			return admission.Config{}, usage(fmt.Errorf("--platform %q: want os/arch[/variant], e.g. linux/amd64", p))
		}
	}
	if c.Duration("timeout") <= 0 || c.Duration("tls-warn") <= 0 {
		return admission.Config{}, usage(errors.New("--timeout and --tls-warn must be positive"))
	}
	verifier, insecure, err := verifierFromFlags(ctx, c)
	if err != nil {
		return admission.Config{}, err
	}
	images, err := imageSignaturesFromFlags(ctx, c, inv, client)
	if err != nil {
		return admission.Config{}, err
	}
	prov, err := provenanceFromFlags(ctx, c, inv)
	if err != nil {
		return admission.Config{}, err
	}
	rs, err := running.Parse(c.String("running"), running.Options{
		DockerHost:        inv.getenv("DOCKER_HOST"),
		ContainerdAddress: inv.getenv("CONTAINERD_ADDRESS"),
		CRIEndpoint:       inv.getenv("CONTAINER_RUNTIME_ENDPOINT"),
		ECSMetadataURI:    inv.getenv("ECS_CONTAINER_METADATA_URI_V4"),
		DefaultContainer:  c.String("image"),
		Client:            client,
	})
	var oe *verdict.OptionError
	if errors.As(err, &oe) {
		// The spec is --running's value: "--running ecs: …".
		return admission.Config{}, usage(fmt.Errorf("--running %s", oe.Reason))
	}
	if err != nil {
		return admission.Config{}, usage(err)
	}
	// Last: it opens (creates) the state directory.
	src, err := trustedSourceFromFlags(ctx, c, inv, client)
	if err != nil {
		return admission.Config{}, err
	}
	return admission.Config{
		CDN:    cdngate.Checker{},
		Source: src, Verifier: verifier, AllowUnsigned: insecure,
		ImageSignatures: images, RequireEmbeddedSignatures: c.Bool("require-embedded-signatures"),
		Provenance: prov,
		TLSWarning: c.Duration("tls-warn"),
		Image:      c.String("image"), Running: rs, Platform: c.String("platform"),
		Probes: c.StringSlice("probe"), Sample: c.Int("sample"), AllAssets: c.Bool("all-assets"), MaxClosure: c.Int("max-closure"), MaxReferences: c.Int("max-references"),
		Instance:   c.String("instance-base"),
		AllowHosts: c.StringSlice("allow-host"), AssetFreePages: c.Bool("asset-free-page"),
		Client: client, Timeout: c.Duration("timeout"), Logger: inv.log,
	}, nil
}

// imageSignaturesFromFlags is the image-signature verifier of
// --require-image-signature (or --require-embedded-signatures), nil
// without: imageVerifierFromFlags for the gate's platform, reading the
// registry (when the manifest embeds nothing) through client.
func imageSignaturesFromFlags(ctx context.Context, c flagValues, inv *invocation, client *transport.Client) (admission.ImageVerifier, error) {
	if !c.Bool("require-image-signature") && !c.Bool("require-embedded-signatures") {
		return nil, nil
	}
	platform := c.String("platform")
	if platform == "" {
		platform = admission.DefaultPlatform()
	}
	remoteOpts := append(ggcrretry.Options(client), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	v, err := imageVerifierFromFlags(ctx, c, inv, []string{platform}, remoteOpts)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// provenanceFromFlags is the provenance verifier of --require-provenance,
// nil without: it reads no registry, only what the manifest embeds.
func provenanceFromFlags(ctx context.Context, c flagValues, inv *invocation) (admission.ProvenanceVerifier, error) {
	if !c.Bool("require-provenance") {
		if c.IsSet("provenance-key") {
			return nil, usage(errors.New("--provenance-key needs --require-provenance"))
		}
		return nil, nil
	}
	v, err := provenanceVerifierFromFlags(ctx, c, inv, nil)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// admitConfig turns the flags into a gate.
func admitConfig(ctx context.Context, c flagValues, inv *invocation) (gate.Config, error) {
	if (c.String("lifecycle-hook") == "") != (c.String("asg") == "") {
		return gate.Config{}, usage(errors.New("--lifecycle-hook and --asg go together"))
	}
	bundle, err := awsCABundle()
	if err != nil {
		return gate.Config{}, err
	}
	client := inv.client(transport.DefaultPolicy(), clientOptions{Gate: true, AllowLinkLocal: c.Bool("allow-link-local"), Bundle: bundle})
	// The AWS APIs are reached on a client of their own: the instance
	// metadata service (IMDS) is link-local by nature.
	awsClient := inv.client(transport.DefaultPolicy(), clientOptions{Bundle: bundle})
	check, err := checkFromFlags(ctx, c, inv, client)
	if err != nil {
		return gate.Config{}, err
	}
	cfg := gate.Config{
		Check:         check,
		LifecycleHook: c.String("lifecycle-hook"), AutoScalingGroup: c.String("asg"),
		TargetGroup: c.String("target-group"), TargetPort: int32(c.Int("target-port")),
		InstanceID: c.String("instance-id"), Region: c.String("region"),
		HeartbeatInterval: c.Duration("heartbeat-interval"),
		DryRun:            c.Bool("dry-run"), Logger: inv.log,
	}
	if cfg.LifecycleHook != "" || cfg.TargetGroup != "" {
		cfg.Connect = func(ctx context.Context, region string) (gate.Clients, error) {
			ac, err := awsConfig(ctx, inv.env, awsClient, awsconfig.WithRegion(region))
			if err != nil {
				return gate.Clients{}, err
			}
			as := autoscaling.NewFromConfig(ac)
			return gate.Clients{Completer: as, Heartbeater: as, Registrar: elbv2.NewFromConfig(ac)}, nil
		}
		if cfg.InstanceID == "" || cfg.Region == "" {
			ac, err := awsConfig(ctx, inv.env, awsClient)
			if err != nil {
				return gate.Config{}, unverified(err)
			}
			cfg.Metadata = imds.NewFromConfig(ac)
		}
	}
	return cfg, nil
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
