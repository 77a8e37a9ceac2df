package app

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/admission/webhook"
	"github.com/lockstep-dev/lockstep/internal/imagename"
	"github.com/lockstep-dev/lockstep/internal/regfile"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

func webhookCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "webhook",
		Usage: "serve the Kubernetes validating admission webhook: admit pods only with the release manifest's digests",
		Description: describe("Serves POST /validate (admission.k8s.io/v1 AdmissionReview), /healthz, /readyz and /metrics over TLS.\n"+
			"Follows the manifest source, re-fetching it every --refresh; until a first verified manifest is loaded,\n"+
			"every review is denied and /readyz is 503. Runs until SIGINT or SIGTERM.",
			[]string{
				"lockstep webhook --tls-cert tls.crt --tls-key tls.key --store s3://releases/lockstep --release store-web \\\n" +
					"  --key cosign.pub",
				"lockstep webhook --listen 127.0.0.1:8443 --tls-cert tls.crt --tls-key tls.key --mode warn --refresh 1m \\\n" +
					"  --manifest https://releases.example.com/store-web/production.json --release store-web --key cosign.pub",
			},
			exits{
				0: "stopped by SIGINT or SIGTERM",
				2: "a bad flag: no --tls-cert or --tls-key, a bad --refresh or --routes",
				3: "it could not serve (the address could not be listened on)",
			}),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "listen", Value: ":8443", Usage: "the address to serve HTTPS on", EnvVars: []string{"LOCKSTEP_LISTEN"}},
			&cli.StringFlag{Name: "tls-cert", Usage: "required: the serving certificate (PEM, with its chain), re-read when it changes", EnvVars: []string{"LOCKSTEP_TLS_CERT"}},
			&cli.StringFlag{Name: "tls-key", Usage: "required: the serving key (PEM), re-read when it changes", EnvVars: []string{"LOCKSTEP_TLS_KEY"}},
			&cli.StringFlag{Name: "mode", Value: string(webhook.Enforce), Usage: "enforce (deny on a finding) or warn (admit, with AdmissionReview warnings)", EnvVars: []string{"LOCKSTEP_MODE"}},
			&cli.StringFlag{Name: "unmanaged", Value: string(webhook.DenyUnmanaged), Usage: "images from repositories the manifest does not govern: allow or deny", EnvVars: []string{"LOCKSTEP_UNMANAGED"}},
			registryAliasFlag(),
			&cli.StringFlag{Name: "routes", Usage: "one webhook, many releases: a routes file (YAML, kind WebhookRoutes) giving each release the namespaces (and repositories) it governs; each release's manifest is followed from --store. Replaces --release and --manifest", EnvVars: []string{"LOCKSTEP_ROUTES"}},
			&cli.DurationFlag{Name: "refresh", Value: 30 * time.Second, Usage: "how often to re-fetch the manifest (±10% jitter)", EnvVars: []string{"LOCKSTEP_REFRESH"}},
		}, acceptFlags()...),
		Action: func(c *cli.Context) error {
			cfg, err := webhookFromFlags(c.Context, c, inv)
			if err != nil {
				return err
			}
			return webhook.Serve(c.Context, cfg)
		},
	}
}

// webhookFromFlags checks the webhook's flags and turns them into its
// config: the manifest source or the routes, the verifier, the names.
func webhookFromFlags(ctx context.Context, c flagValues, inv *invocation) (webhook.Config, error) {
	if c.String("tls-cert") == "" || c.String("tls-key") == "" {
		return webhook.Config{}, usage(fmt.Errorf("--tls-cert and --tls-key are required"))
	}
	mode, err := webhook.ParseMode(c.String("mode"))
	if err != nil {
		return webhook.Config{}, usage(fmt.Errorf("--%v", err))
	}
	unmanaged, err := webhook.ParseUnmanaged(c.String("unmanaged"))
	if err != nil {
		return webhook.Config{}, usage(fmt.Errorf("--%v", err))
	}
	if c.Duration("refresh") < time.Second {
		return webhook.Config{}, usage(fmt.Errorf("--refresh %s: want at least 1s", c.Duration("refresh")))
	}
	names, err := namesFromFlags(c)
	if err != nil {
		return webhook.Config{}, err
	}
	var src manifest.Source
	var routes []webhook.SourceRoute
	if c.String("routes") != "" {
		routes, err = routesFromFlags(ctx, c, inv, names)
	} else {
		src, err = sourceFromFlags(ctx, c, inv)
	}
	if err != nil {
		return webhook.Config{}, err
	}
	verifier, insecure, err := verifierFromFlags(ctx, c)
	if err != nil {
		return webhook.Config{}, err
	}
	log := inv.log
	if insecure {
		log.Warn("--insecure-allow-unsigned: manifests are used without a signature check")
	}
	return webhook.Config{
		Listen:        c.String("listen"),
		Listener:      inv.listener(c.String("listen")),
		CertFile:      c.String("tls-cert"),
		KeyFile:       c.String("tls-key"),
		Source:        src,
		Routes:        routes,
		Verifier:      verifier,
		AllowUnsigned: insecure,
		Refresh:       c.Duration("refresh"),
		Mode:          mode,
		Unmanaged:     unmanaged,
		Names:         names,
		Logger:        log,
	}, nil
}

// routesFromFlags reads --routes and makes each route's source: the
// route's release and channel (default --channel) in --store, bound to
// the release, so that a store that hands over another release's manifest
// is refused.
func routesFromFlags(ctx context.Context, c flagValues, inv *invocation, names imagename.Names) ([]webhook.SourceRoute, error) {
	if c.String("manifest") != "" || c.String("release") != "" {
		return nil, usage(fmt.Errorf("--routes replaces --release and --manifest: each route names its release, followed from --store"))
	}
	url := c.String("store")
	if url == "" {
		return nil, usage(fmt.Errorf("--routes needs --store URL: the store each route's release is followed from"))
	}
	data, err := regfile.Read(c.String("routes"), webhook.MaxRoutesSize)
	if err != nil {
		return nil, usage(fmt.Errorf("--routes: %w", err))
	}
	rs, err := webhook.ParseRoutes(data, names)
	if err != nil {
		return nil, usage(fmt.Errorf("--routes %s: %w", c.String("routes"), err))
	}
	st, err := inv.openStore(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	out := make([]webhook.SourceRoute, len(rs.Routes))
	for i, r := range rs.Routes {
		if r.Channel == "" {
			r.Channel = c.String("channel")
		}
		out[i] = webhook.SourceRoute{Route: r, Source: manifest.Bound{
			Source:  store.ChannelSource{Store: st, Release: r.Release, Channel: r.Channel, Name: url},
			Release: r.Release,
		}}
	}
	return out, nil
}
