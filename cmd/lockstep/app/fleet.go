package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/regfile"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/fleet"
	"github.com/lockstep-dev/lockstep/verify/fleet/kube"
)

var fleetFormats = []string{"text", "json", "markdown", "sarif"}

func fleetCommand(inv *invocation) *cli.Command {
	return group("fleet", "check that a fleet runs exactly the release",
		describe("fleet check asks every instance's agent (lockstep agent) what it runs and compares the fleet with\n"+
			"the manifest: the divergent and the unreachable instances, by name.",
			[]string{
				"lockstep fleet check --manifest release.json --release store-web --key cosign.pub --targets asg:store-web",
				"lockstep fleet check --store s3://releases/lockstep --release store-web --key cosign.pub --format markdown asg:store-web",
			},
			groupExits("fleet")),
		fleetCheckCommand(inv))
}

func fleetCheckCommand(inv *invocation) *cli.Command {
	flags := acceptFlags()
	flags = append(flags,
		&cli.StringSliceFlag{Name: "targets", Usage: "instances to check: asg:NAME, tg:ARN, ec2-tag:KEY=VALUE, ecs:CLUSTER/SERVICE, k8s:NAMESPACE[/SELECTOR] (no agent: the orchestrator's digests), file:PATH or status URLs (repeatable; arguments are targets too)"},
		&cli.IntFlag{Name: "agent-port", Value: fleet.DefaultAgentPort, Usage: "the agent's port on discovered instances"},
		&cli.StringFlag{Name: "agent-scheme", Value: "http", Usage: "http or https, for discovered instances"},
		&cli.IntFlag{Name: "concurrency", Value: fleet.DefaultConcurrency, Usage: "statuses fetched at once"},
		&cli.DurationFlag{Name: "timeout", Value: fleet.DefaultTimeout, Usage: "bound on each instance's fetch, retries included"},
		&cli.DurationFlag{Name: "deadline", Value: 2 * time.Minute, Usage: "bound on the whole check, discovery included"},
		&cli.Float64Flag{Name: "max-unreachable", Value: fleet.DefaultMaxUnreachable, Usage: "fraction of instances that may be unreachable before the check cannot say (exit 3)"},
		&cli.StringFlag{Name: "token-file", Usage: "a file holding the agents' bearer token", EnvVars: []string{"LOCKSTEP_AGENT_TOKEN_FILE"}},
		&cli.StringFlag{Name: "ca-cert", Usage: "PEM CAs that sign https agents' certificates (default: the system's)"},
		&cli.StringFlag{Name: "client-cert", Usage: "PEM client certificate for agents that require one"},
		&cli.StringFlag{Name: "client-key", Usage: "PEM key of --client-cert"},
		&cli.StringFlag{Name: "region", Usage: "AWS region for discovery (default: the SDK's configuration)", EnvVars: []string{"AWS_REGION"}},
		registryAliasFlag(),
		&cli.StringFlag{Name: "kubeconfig", Usage: "kubeconfig for k8s:NAMESPACE[/SELECTOR] targets (default: $KUBECONFIG, the in-cluster service account, then ~/.kube/config)"},
		&cli.StringFlag{Name: "report", Usage: "also write the JSON report to this file (for gc --in-use)"},
		allowLinkLocalFlag(),
		formatFlag(fleetFormats...),
	)
	return &cli.Command{
		Name:      "check",
		Usage:     "fetch every instance agent's status and compare the fleet with the manifest",
		ArgsUsage: "[TARGET...]",
		Description: describe("Discovers the instances (an Auto Scaling group, a target group, EC2 tags, a file or status\n"+
			"URLs), fetches each agent's /v1/status and compares what runs with the manifest: the instances that\n"+
			"diverge and those that could not be reached, by name.",
			[]string{
				"lockstep fleet check --manifest release.json --release store-web --key cosign.pub --targets asg:store-web",
				"lockstep fleet check --store s3://releases/lockstep --release store-web --key cosign.pub \\\n" +
					"  --format markdown asg:store-web >> \"$GITHUB_STEP_SUMMARY\"",
				"lockstep fleet check --manifest release.json --release store-web --key cosign.pub \\\n" +
					"  --token-file agent-token --report fleet.json ec2-tag:app=store-web",
			},
			exits{
				0: "every reachable instance matches, and at most --max-unreachable of the fleet is unreachable",
				1: "an instance diverges (whatever the unreachable count)",
				2: "bad flags or targets",
				3: "more than --max-unreachable of the fleet is unreachable, or there were no instances",
			}),
		Flags:  flags,
		Action: inv.act(fleetCheck),
		// An unknown or malformed flag is a usage error (exit 2).
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return flagUsage(err, "lockstep fleet check") },
	}
}

func fleetCheck(c *cli.Context, inv *invocation) error {
	f, err := format(c, fleetFormats...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("deadline"))
	defer cancel()
	m, opts, err := fleetRunFromFlags(ctx, c, inv, c.Args().Slice())
	if err != nil {
		return err
	}
	r, err := fleet.Run(ctx, m, opts)
	var se *fleet.SpecError
	if errors.As(err, &se) {
		return usage(err)
	}
	if r == nil {
		return err
	}
	if werr := r.Write(c.App.Writer, f); werr != nil {
		return werr
	}
	return err
}

// fleetRunFromFlags checks the fleet check's flags and turns them into the
// manifest and fleet.RunOptions: the manifest fetched and verified, the
// agents' transport, the AWS clients the specs need, the token.
func fleetRunFromFlags(ctx context.Context, c flagValues, inv *invocation, args []string) (*manifest.Signed, fleet.RunOptions, error) {
	var o fleet.RunOptions
	o.Specs = append(c.StringSlice("targets"), args...)
	if len(o.Specs) == 0 {
		return nil, o, usage(errors.New("no targets: give --targets asg:NAME, tg:ARN, ec2-tag:KEY=VALUE, ecs:CLUSTER/SERVICE, k8s:NAMESPACE[/SELECTOR], file:PATH or status URLs"))
	}
	if mu := c.Float64("max-unreachable"); mu < 0 || mu > 1 {
		return nil, o, usage(fmt.Errorf("--max-unreachable %g: want a fraction between 0 and 1", mu))
	}
	if s := c.String("agent-scheme"); s != "http" && s != "https" {
		return nil, o, usage(fmt.Errorf("--agent-scheme %q: want http or https", s))
	}
	names, err := namesFromFlags(c)
	if err != nil {
		return nil, o, err
	}
	m, err := fleetManifest(ctx, c, inv)
	if err != nil {
		return nil, o, err
	}
	client, err := fleetAgentClient(c, inv)
	if err != nil {
		return nil, o, err
	}
	if o.Discover, err = discoverOptions(ctx, c, inv, o.Specs); err != nil {
		return nil, o, err
	}
	var token string
	if p := c.String("token-file"); p != "" {
		t, err := readBearerToken(p)
		if err != nil {
			return nil, o, err
		}
		token = string(t)
	}
	o.Check = fleet.Options{
		Client: client, Concurrency: c.Int("concurrency"), Timeout: c.Duration("timeout"),
		MaxUnreachable: c.Float64("max-unreachable"), Token: token, Logger: inv.log, Names: names,
	}
	o.ReportFile = c.String("report")
	return m, o, nil
}

// fleetManifest fetches the manifest the source flags name and verifies
// it as the trust flags say.
func fleetManifest(ctx context.Context, c flagValues, inv *invocation) (*manifest.Signed, error) {
	src, err := sourceWithClient(ctx, c, inv, inv.client(transport.DefaultPolicy(), clientOptions{Gate: true, AllowLinkLocal: c.Bool("allow-link-local")}))
	if err != nil {
		return nil, err
	}
	v, insecure, err := verifierFromFlags(ctx, c)
	if err != nil {
		return nil, err
	}
	m, err := src.Fetch(ctx)
	if err != nil {
		return nil, err
	}
	if insecure {
		inv.log.Warn("the manifest's signature is not checked (--insecure-allow-unsigned)", "manifest", m.Location)
	} else if v != nil {
		if err := v.Verify(ctx, m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// fleetAgentClient is the transport to agents: the default policy with
// --timeout per attempt, and the TLS flags.
func fleetAgentClient(c flagValues, inv *invocation) (*transport.Client, error) {
	p := transport.DefaultPolicy()
	p.Timeout = c.Duration("timeout")
	o := clientOptions{Gate: true, AllowLinkLocal: c.Bool("allow-link-local")}
	if c.String("ca-cert") != "" || c.String("client-cert") != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if ca := c.String("ca-cert"); ca != "" {
			pem, err := os.ReadFile(ca)
			if err != nil {
				return nil, usage(fmt.Errorf("--ca-cert: %w", err))
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, usage(fmt.Errorf("--ca-cert %s: no PEM certificate", ca))
			}
		}
		if cert := c.String("client-cert"); cert != "" {
			pair, err := tls.LoadX509KeyPair(cert, c.String("client-key"))
			if err != nil {
				return nil, usage(fmt.Errorf("--client-cert: %w", err))
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		o.TLS = cfg
	}
	return inv.client(p, o), nil
}

// discoverOptions builds the AWS clients the specs need, and only those,
// on the shared transport with the SDK's retryer set to the same policy.
func discoverOptions(ctx context.Context, c flagValues, inv *invocation, specs []string) (fleet.DiscoverOptions, error) {
	o := fleet.DiscoverOptions{AgentPort: c.Int("agent-port"), Scheme: c.String("agent-scheme")}
	need := fleet.Needs(specs)
	if need.Kubernetes {
		kc, err := kube.Load(c.String("kubeconfig"))
		if err != nil {
			return o, usage(fmt.Errorf("k8s targets: %w", err))
		}
		hc := inv.client(transport.DefaultPolicy(), clientOptions{TLS: kc.TLS}).HTTPClient()
		o.Kubernetes = &kube.Client{Config: kc, HTTP: hc}
	}
	if !need.AWS() {
		return o, nil
	}
	var opts []func(*awsconfig.LoadOptions) error
	if r := c.String("region"); r != "" {
		opts = append(opts, awsconfig.WithRegion(r))
	}
	bundle, err := awsCABundle()
	if err != nil {
		return o, err
	}
	cfg, err := awsConfig(ctx, inv.env, inv.client(transport.DefaultPolicy(), clientOptions{Bundle: bundle}), opts...)
	if err != nil {
		return o, err
	}
	if need.AutoScaling {
		o.AutoScaling = autoscaling.NewFromConfig(cfg)
	}
	if need.EC2 {
		o.EC2 = ec2.NewFromConfig(cfg)
	}
	if need.ELBv2 {
		o.ELBv2 = elbv2.NewFromConfig(cfg)
	}
	if need.ECS {
		o.ECS = ecs.NewFromConfig(cfg)
	}
	return o, nil
}

// readBearerToken reads a bearer token file: its content without surrounding
// white space, which must not be empty.
func readBearerToken(path string) ([]byte, error) {
	b, err := regfile.Read(path, 64<<10)
	if err != nil {
		return nil, usage(fmt.Errorf("reading the token file: %w", err))
	}
	t := strings.TrimSpace(string(b))
	if t == "" || strings.ContainsAny(t, " \t\r\n") {
		return nil, usage(fmt.Errorf("token file %s: want one token, no white space", path))
	}
	return []byte(t), nil
}
