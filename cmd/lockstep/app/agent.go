package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/admission/agent"
	"github.com/lockstep-dev/lockstep/internal/transport"
)

func agentCommand(inv *invocation) *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "listen", Value: agent.DefaultListen, Usage: "host:port to serve /v1/status, /healthz and /metrics on; a non-loopback address needs --token-file or --tls-cert/--tls-key/--client-ca", EnvVars: []string{"LOCKSTEP_AGENT_LISTEN"}},
		&cli.StringFlag{Name: "token-file", Usage: "a file holding the bearer token /v1/status and /metrics require", EnvVars: []string{"LOCKSTEP_AGENT_TOKEN_FILE"}},
		&cli.StringFlag{Name: "tls-cert", Usage: "serve HTTPS with this PEM certificate"},
		&cli.StringFlag{Name: "tls-key", Usage: "the PEM key of --tls-cert"},
		&cli.StringFlag{Name: "client-ca", Usage: "PEM CAs whose client certificates may read /v1/status and /metrics (with --tls-cert)"},
		&cli.DurationFlag{Name: "interval", Value: 60 * time.Second, Usage: "time between checks (each wait drawn from interval ± jitter)"},
		&cli.Float64Flag{Name: "jitter", Value: 0.2, Usage: "fraction of --interval each wait varies by, in [0, 1)"},
		&cli.DurationFlag{Name: "watch-interval", Value: 15 * time.Second, Usage: "with --store: how often to read the channel; a new generation starts a check at once"},
		&cli.StringFlag{Name: "identity", Value: "auto", Usage: "where the instance identity comes from: auto (IMDSv2, else the hostname), imds (required) or hostname"},
		&cli.StringFlag{Name: "instance-name", Usage: "name the instance in its status (instead of the IMDS instance ID)", EnvVars: []string{"LOCKSTEP_INSTANCE_NAME"}},
	}
	return &cli.Command{
		Name:      "agent",
		Usage:     "re-run the admission check on an interval and serve the instance's status, health and metrics",
		UsageText: "lockstep agent [--listen ADDR] [--token-file FILE | --tls-cert FILE --tls-key FILE --client-ca FILE] (--manifest SRC | --store URL) --release NAME --image NAME --running SOURCE [--probe URL...]",
		Description: describe("Runs admit's check every --interval (and at once when --store's channel moves) and serves\n"+
			"the last result on /v1/status, with /healthz and Prometheus /metrics, for lockstep fleet check to read.\n"+
			"Runs until SIGTERM.",
			[]string{
				"lockstep agent --store s3://releases/lockstep --release store-web --key cosign.pub --image web \\\n" +
					"  --running docker:app --probe http://127.0.0.1:8080/",
				"lockstep agent --listen :9464 --token-file /etc/lockstep/agent-token --manifest release.json \\\n" +
					"  --release store-web --key cosign.pub --running ecs:web",
			},
			exits{
				0: "stopped by SIGTERM",
				2: "a bad flag (a non-loopback --listen without --token-file or client certificates)",
				3: "it could not listen, or --identity imds found no instance metadata",
			}),
		Flags:  append(flags, consumerFlags()...),
		Action: inv.act(runAgent),
		// An unknown or malformed flag is a usage error (exit 2).
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return flagUsage(err, "lockstep agent") },
	}
}

func runAgent(c *cli.Context, inv *invocation) error {
	cfg, opts, err := agentFromFlags(c.Context, c, inv)
	if err != nil {
		return err
	}
	ready := func(addr net.Addr) {
		cfg.Logger.Info("agent listening", "addr", addr.String(), "instance", cfg.Identity.Name())
	}
	if err := agent.ServeAndRun(c.Context, agent.New(cfg), opts, ready); err != nil {
		return unverified(err)
	}
	return nil
}

// agentFromFlags checks the agent's flags and turns them into its config
// (checker, manifest watch, identity) and serve options.
func agentFromFlags(ctx context.Context, c flagValues, inv *invocation) (agent.Config, agent.ServeOptions, error) {
	if j := c.Float64("jitter"); j < 0 || j >= 1 {
		return agent.Config{}, agent.ServeOptions{}, usage(fmt.Errorf("--jitter %g: want a fraction in [0, 1)", j))
	}
	if c.Duration("interval") <= 0 || c.Duration("watch-interval") <= 0 {
		return agent.Config{}, agent.ServeOptions{}, usage(errors.New("--interval and --watch-interval must be positive"))
	}
	opts, err := agentServeOptions(c)
	if err != nil {
		return agent.Config{}, opts, err
	}
	checker, watch, err := agentChecker(ctx, c, inv)
	if err != nil {
		return agent.Config{}, opts, err
	}
	id, err := agentIdentity(ctx, c, inv)
	if err != nil {
		return agent.Config{}, opts, err
	}
	return agent.Config{
		// admission.Check keeps its own --timeout; this only backs it up.
		Checker: checker, CheckTimeout: c.Duration("timeout") + 10*time.Second,
		Interval: c.Duration("interval"), Jitter: c.Float64("jitter"),
		Watch: watch, WatchInterval: c.Duration("watch-interval"),
		Identity: id, Version: Version, Logger: inv.log,
	}, opts, nil
}

// agentServeOptions turns the listen and authentication flags into serve
// options, refusing a non-loopback address without authentication.
func agentServeOptions(c flagValues) (agent.ServeOptions, error) {
	o := agent.ServeOptions{Addr: c.String("listen")}
	if p := c.String("token-file"); p != "" {
		t, err := readBearerToken(p)
		if err != nil {
			return o, err
		}
		o.Token = t
	}
	cert, key, ca := c.String("tls-cert"), c.String("tls-key"), c.String("client-ca")
	switch {
	case (cert == "") != (key == ""):
		return o, usage(errors.New("--tls-cert and --tls-key go together"))
	case ca != "" && cert == "":
		return o, usage(errors.New("--client-ca needs --tls-cert and --tls-key"))
	case cert != "":
		cfg, err := agent.ServerTLS(cert, key, ca)
		if err != nil {
			return o, usage(err)
		}
		o.TLS = cfg
	}
	err := o.Check()
	if errors.Is(err, agent.ErrExposed) {
		// In the flags' words.
		return o, usage(fmt.Errorf("listen address %q: a non-loopback --listen needs --token-file or TLS client certificates (--tls-cert, --tls-key, --client-ca)", o.Addr))
	}
	if err != nil {
		return o, usage(err)
	}
	return o, nil
}

// agentIdentity finds the instance's identity as --identity says: IMDSv2
// (bounded to a few seconds; the Auto Scaling group from the instance's
// tags, else from DescribeAutoScalingInstances), the hostname otherwise.
func agentIdentity(ctx context.Context, c flagValues, inv *invocation) (agent.Identity, error) {
	mode := c.String("identity")
	switch mode {
	case "hostname":
		id, _ := agent.Identify(ctx, agent.IdentifyOptions{})
		return named(c, id), nil
	case "auto", "imds":
	default:
		return agent.Identity{}, usage(fmt.Errorf("--identity %q: want auto, imds or hostname", mode))
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// The SDK's configuration, as the boot gate loads it: the IMDS
	// endpoint (AWS_EC2_METADATA_SERVICE_ENDPOINT, AWS_EC2_METADATA_DISABLED)
	// and, for Auto Scaling, the region from IMDS unless configured.
	var o agent.IdentifyOptions
	var errs []error
	bundle, err := awsCABundle()
	var cfg aws.Config
	if err == nil {
		cfg, err = awsConfig(ctx, inv.env, inv.client(transport.DefaultPolicy(), clientOptions{Bundle: bundle}), awsconfig.WithEC2IMDSRegion())
	}
	if err != nil {
		errs = append(errs, err)
	} else {
		o.IMDS, o.AutoScaling = imds.NewFromConfig(cfg), autoscaling.NewFromConfig(cfg)
	}
	id, more := agent.Identify(ctx, o)
	errs = append(errs, more...)
	if id.Source != "imds" {
		if mode == "imds" {
			return id, unverified(fmt.Errorf("--identity imds: %w", errors.Join(errs...)))
		}
		if c.String("instance-name") == "" {
			inv.log.Info("no instance metadata; the hostname identifies this instance", "hostname", id.Hostname)
		}
	}
	for _, err := range errs {
		inv.log.Debug("finding the instance identity", "err", err)
	}
	return named(c, id), nil
}

// named applies --instance-name.
func named(c flagValues, id agent.Identity) agent.Identity {
	if n := c.String("instance-name"); n != "" {
		id.InstanceID, id.Source = n, "flag"
	}
	return id
}
