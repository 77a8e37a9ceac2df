package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/internal/transport/ggcrretry"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/pin"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

func pinCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:      "pin",
		Usage:     "resolve image references to their digests (and rewrite files to use them)",
		ArgsUsage: "[NAME=]REF...",
		Description: describe(`Resolves each reference with the registry and prints its pinned form,
repo:tag@sha256:…, one a line (--format json: every digest). NAME= names the
image's role (default: the reference). With --previous, a tag that now names
other bytes than in that manifest is refused (exit 1) unless
--allow-moved-tag names it. --write rewrites the references in Kubernetes
YAML, docker-compose, ECS task definitions and Dockerfiles in place; without
REF arguments, every reference found in those files is pinned.

With --verify-key PUB (or the keyless --certificate-identity[-regexp] and
--certificate-oidc-issuer[-regexp] flags), the cosign signature of each
pinned digest is verified too, offline (no transparency-log call); for an
index, --image-signature-policy says which manifests must be signed
(default: every platform pinned).`,
			[]string{
				"lockstep pin registry.example/store/web:v1.4.2",
				"lockstep pin --previous release.json --write k8s/deploy.yaml --write docker-compose.yaml",
				"lockstep pin --verify-key cosign.pub --format json web=registry.example/store/web:v1.4.2",
			},
			exits{
				0: "pinned (and verified)",
				1: "a moved tag, or an unsigned or wrongly signed image",
				2: "a bad reference, flag, key or file, or an image that does not exist",
				3: "the registry could not be reached or refused the credentials",
			}),
		Flags: append([]cli.Flag{
			formatFlag("text", "json"),
			&cli.StringFlag{Name: "platform", Usage: "keep only this platform of each image: `OS/ARCH`[/VARIANT]"},
			&cli.StringFlag{Name: "previous", Usage: "the previous release `MANIFEST`: refuse tags that moved since"},
			&cli.GenericFlag{Name: "allow-moved-tag", Value: &repeated{}, Usage: "accept this moved tag: a role `NAME`, a REF or a repo:tag; repeatable"},
			&cli.GenericFlag{Name: "write", Value: &repeated{}, Usage: "rewrite the image references in `FILE` to their pinned form; repeatable"},
			&cli.IntFlag{Name: "concurrency", Value: registry.DefaultConcurrency, Usage: "references resolved at once"},
			&cli.StringFlag{Name: "cache", Value: defaultPinCache(), EnvVars: []string{"LOCKSTEP_CACHE"},
				Usage: "`DIR` of image configs and platform manifests kept by digest (verified on read); empty for none"},
		}, append(imageSignatureFlags(), identityFlags()...)...),
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return flagUsage(err, "lockstep pin") },
		Action:       inv.act(runPin),
	}
}

// defaultPinCache is $XDG_CACHE_HOME/lockstep/registry (or the platform's
// user cache directory), or none when there is no such directory.
func defaultPinCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "lockstep", "registry")
}

// repeated is a flag that may be given many times; unlike
// cli.StringSliceFlag it does not split values on commas (paths may hold
// them).
type repeated []string

func (r *repeated) Set(s string) error { *r = append(*r, s); return nil }
func (r *repeated) String() string     { return strings.Join(*r, ", ") }

func repeatedFlag(c flagValues, name string) []string {
	if r, ok := c.Generic(name).(*repeated); ok && r != nil {
		return *r
	}
	return nil
}

func runPin(c *cli.Context, inv *invocation) error {
	form, err := format(c, "text", "json")
	if err != nil {
		return err
	}
	opts, err := pinOptions(c.Context, c, inv, c.Args().Slice())
	if err != nil {
		return err
	}
	report, err := pin.Run(c.Context, opts)
	var fe *pin.FileError
	if errors.As(err, &fe) {
		return inputError("--write", fe.Err)
	}
	// Refused: the JSON report says why; text prints no pins.
	if report != nil && (err == nil || form == "json") {
		if werr := report.Write(c.App.Writer, form); werr != nil {
			return werr
		}
	}
	return err
}

// pinOptions turns pin's arguments (args) and flags into the library's
// options.
func pinOptions(ctx context.Context, c flagValues, inv *invocation, args []string) (pin.Options, error) {
	if c.Int("concurrency") < 1 {
		return pin.Options{}, usage(fmt.Errorf("--concurrency %d: want at least 1", c.Int("concurrency")))
	}
	reqs, err := pin.ParseRequests(args)
	if err != nil {
		return pin.Options{}, usage(err)
	}
	writes := repeatedFlag(c, "write")
	if len(reqs) == 0 && len(writes) == 0 {
		return pin.Options{}, usage(errors.New("pin needs image references, or files to --write"))
	}
	var prev *manifest.Manifest
	if path := c.String("previous"); path != "" {
		if prev, _, err = manifest.ReadFile(path); err != nil {
			return pin.Options{}, inputError("--previous", err)
		}
	}
	client := inv.client(transport.DefaultPolicy(), clientOptions{})
	sigs := func(context.Context) (*imagesig.Verifier, error) { return pinSignatures(ctx, c, inv, client) }
	return pin.Options{Requests: reqs, Write: writes, Signatures: sigs, Logger: inv.log,
		Registry: registry.Options{Platform: c.String("platform"), Concurrency: c.Int("concurrency"), Client: client,
			Previous: prev, AllowMoved: repeatedFlag(c, "allow-moved-tag"), Cache: c.String("cache")}}, nil
}

// pinSignatures is the image-signature verifier pin's flags ask for, or
// nil when they name no signer (--verify-key, alias --image-key, or a
// keyless --certificate-* flag). The policy's platforms are --platform's,
// else every platform pinned; the verifier's registry requests share
// client and the default keychain with pinning.
func pinSignatures(ctx context.Context, c flagValues, inv *invocation, client *transport.Client) (*imagesig.Verifier, error) {
	named := false
	for _, f := range []string{"image-key", "certificate-identity", "certificate-identity-regexp", "certificate-oidc-issuer", "certificate-oidc-issuer-regexp"} {
		named = named || c.String(f) != ""
	}
	if !named {
		return nil, nil
	}
	var platforms []string
	if p := c.String("platform"); p != "" {
		platforms = []string{p}
	}
	return imageVerifierFromFlags(ctx, c, inv, platforms, append(ggcrretry.Options(client), remote.WithAuthFromKeychain(authn.DefaultKeychain)))
}
