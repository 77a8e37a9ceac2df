package app

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/admission/webhook"
)

func webhookCommand() *cli.Command {
	return &cli.Command{
		Name:  "webhook",
		Usage: "serve the Kubernetes validating admission webhook: admit pods only with the release manifest's digests",
		Description: "Serves POST /validate (admission.k8s.io/v1 AdmissionReview), /healthz, /readyz and /metrics over TLS.\n" +
			"Follows the manifest source, re-fetching it every --refresh; until a first verified manifest is loaded,\n" +
			"every review is denied and /readyz is 503. Runs until SIGINT or SIGTERM.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "listen", Value: ":8443", Usage: "the address to serve HTTPS on", EnvVars: []string{"LOCKSTEP_LISTEN"}},
			&cli.StringFlag{Name: "tls-cert", Usage: "required: the serving certificate (PEM, with its chain), re-read when it changes", EnvVars: []string{"LOCKSTEP_TLS_CERT"}},
			&cli.StringFlag{Name: "tls-key", Usage: "required: the serving key (PEM), re-read when it changes", EnvVars: []string{"LOCKSTEP_TLS_KEY"}},
			&cli.StringFlag{Name: "mode", Value: string(webhook.Enforce), Usage: "enforce (deny on a finding) or warn (admit, with AdmissionReview warnings)", EnvVars: []string{"LOCKSTEP_MODE"}},
			&cli.StringFlag{Name: "unmanaged", Value: string(webhook.DenyUnmanaged), Usage: "images from repositories the manifest does not govern: allow or deny", EnvVars: []string{"LOCKSTEP_UNMANAGED"}},
			registryAliasFlag(),
			&cli.DurationFlag{Name: "refresh", Value: 30 * time.Second, Usage: "how often to re-fetch the manifest (±10% jitter)", EnvVars: []string{"LOCKSTEP_REFRESH"}},
		}, acceptFlags()...),
		Action: func(c *cli.Context) error {
			if c.String("tls-cert") == "" || c.String("tls-key") == "" {
				return usage(fmt.Errorf("--tls-cert and --tls-key are required"))
			}
			mode, err := webhook.ParseMode(c.String("mode"))
			if err != nil {
				return usage(fmt.Errorf("--%v", err))
			}
			unmanaged, err := webhook.ParseUnmanaged(c.String("unmanaged"))
			if err != nil {
				return usage(fmt.Errorf("--%v", err))
			}
			if c.Duration("refresh") < time.Second {
				return usage(fmt.Errorf("--refresh %s: want at least 1s", c.Duration("refresh")))
			}
			names, err := namesFromFlags(c)
			if err != nil {
				return err
			}
			src, err := sourceFromFlags(c)
			if err != nil {
				return err
			}
			verifier, insecure, err := verifierFromFlags(c)
			if err != nil {
				return err
			}
			log := logger(c)
			if insecure {
				log.Warn("--insecure-allow-unsigned: manifests are used without a signature check")
			}
			return webhook.Serve(c.Context, webhook.Config{
				Listen:        c.String("listen"),
				CertFile:      c.String("tls-cert"),
				KeyFile:       c.String("tls-key"),
				Source:        src,
				Verifier:      verifier,
				AllowUnsigned: insecure,
				Refresh:       c.Duration("refresh"),
				Mode:          mode,
				Unmanaged:     unmanaged,
				Names:         names,
				Logger:        log,
			})
		},
	}
}
