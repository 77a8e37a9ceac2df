package app

// The flag families, each declared once and reused by every command that
// takes it: a manifest's source, whom to trust, the admission check and
// its trusted state, the store, keyless signing and the transport's gate
// (--allow-link-local). A command's own flags stay with its command.

import (
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/manifest/trusted"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
)

// sourceFlags are the flags every consumer of a manifest takes: a file or
// URL (--manifest) or a store channel (--store, --release, --channel).
func sourceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "manifest", Usage: "the release manifest: a file path or an https URL; needs --release, the release it must be of", EnvVars: []string{"LOCKSTEP_MANIFEST"}},
		&cli.StringFlag{Name: "store", Usage: "a manifest store URL (file://DIR, s3://BUCKET/PREFIX), in place of --manifest", EnvVars: []string{"LOCKSTEP_STORE"}},
		&cli.StringFlag{Name: "release", Usage: "the release this consumer follows: required with --store and with --manifest; a manifest of another release is refused (manifest-wrong-release)", EnvVars: []string{"LOCKSTEP_RELEASE"}},
		&cli.StringFlag{Name: "channel", Value: "production", Usage: "the store channel, with --store", EnvVars: []string{"LOCKSTEP_CHANNEL"}},
	}
}

// trustFlags are the flags every consumer of a manifest takes to decide
// whom to trust.
func trustFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "key", Usage: "the public key (PEM file such as cosign.pub, or a KMS URI) that must have signed the manifest", EnvVars: []string{"LOCKSTEP_KEY"}},
		&cli.BoolFlag{Name: "insecure-allow-unsigned", Usage: "accept an unsigned manifest (a wrongly signed one is still refused; said in every report)", EnvVars: []string{"LOCKSTEP_INSECURE_ALLOW_UNSIGNED"}},
	}, identityFlags()...)
}

// identityFlags are the keyless-trust flags: whose certificate counts, and
// the trusted root to check it against.
func identityFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "certificate-identity", Usage: "keyless: the signer identity (certificate SAN) that must have signed, e.g. https://github.com/ORG/REPO/.github/workflows/release.yml@refs/heads/main", EnvVars: []string{"LOCKSTEP_CERTIFICATE_IDENTITY"}},
		&cli.StringFlag{Name: "certificate-identity-regexp", Usage: "keyless: a regular expression the signer identity must match", EnvVars: []string{"LOCKSTEP_CERTIFICATE_IDENTITY_REGEXP"}},
		&cli.StringFlag{Name: "certificate-oidc-issuer", Usage: "keyless: the OIDC issuer the certificate must name, e.g. https://token.actions.githubusercontent.com", EnvVars: []string{"LOCKSTEP_CERTIFICATE_OIDC_ISSUER"}},
		&cli.StringFlag{Name: "certificate-oidc-issuer-regexp", Usage: "keyless: a regular expression the OIDC issuer must match"},
		&cli.StringFlag{Name: "trusted-root", Usage: "keyless: a Sigstore trusted root file (trusted_root.json), for offline verification; without it, fetched from Sigstore's TUF repository unless --offline", EnvVars: []string{"LOCKSTEP_TRUSTED_ROOT"}},
		&cli.BoolFlag{Name: "offline", Usage: "no network call for trust: no TUF, transparency-log or certificate-transparency calls (keyless then needs --trusted-root)", EnvVars: []string{"LOCKSTEP_OFFLINE"}},
		&cli.BoolFlag{Name: "insecure-ignore-tlog", Usage: "keyless: accept a certificate without a transparency-log entry, checked at the current time (private CAs, tests)"},
		&cli.BoolFlag{Name: "insecure-ignore-sct", Usage: "keyless: accept a certificate without a certificate-transparency timestamp (private CAs, tests)"},
	}
}

// imageSignatureFlags are the flags of image-signature verification, for
// `pin` (with identityFlags) and `admit` (with trustFlags).
func imageSignatureFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "image-key", Aliases: []string{"verify-key"}, Usage: "the public key (PEM or KMS URI) images must be signed with (default: --key, where the command has it)", EnvVars: []string{"LOCKSTEP_IMAGE_KEY"}},
		&cli.StringFlag{Name: "image-signature-policy", Value: string(imagesig.EveryPlatform), Usage: "which manifests of an index must be signed: platforms (every platform the release runs), index (the index alone), all", EnvVars: []string{"LOCKSTEP_IMAGE_SIGNATURE_POLICY"}},
		&cli.StringFlag{Name: "signature-cache-dir", Usage: "keep verified image digests in this directory too, so that a restart starts warm", EnvVars: []string{"LOCKSTEP_SIGNATURE_CACHE_DIR"}},
		&cli.IntFlag{Name: "signature-cache-size", Value: imagesig.DefaultMaxEntries, Usage: "the most verified digests the cache keeps"},
	}
}

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
		&cli.BoolFlag{Name: "all-assets", Usage: "check every manifest asset where it is served (the CDN, or the instance for those the manifest says it serves)"},
		&cli.StringFlag{Name: "instance-base", Usage: "the base `URL` under which the instance serves the assets the manifest says it serves itself (record --instance-path), each at its path (default: the root of the first --probe's origin)", EnvVars: []string{"LOCKSTEP_INSTANCE_BASE"}},
		&cli.IntFlag{Name: "max-closure", Value: admission.DefaultMaxClosure, Usage: "the most assets the served ones may load by the manifest's asset graph (their closure, checked on the CDN); a larger closure refuses as could-not-verify (--all-assets checks everything, unbounded)", EnvVars: []string{"LOCKSTEP_MAX_CLOSURE"}},
		&cli.IntFlag{Name: "max-references", Value: admission.DefaultMaxReferences, Usage: "the most assets the probed pages may reference (each checked on the CDN; --max-closure counts only what their closure adds); more refuses as could-not-verify before any is checked (--all-assets checks everything, unbounded)", EnvVars: []string{"LOCKSTEP_MAX_REFERENCES"}},
		&cli.StringSliceFlag{Name: "allow-host", Usage: "a third-party `HOST` (host, host:port or *.domain) pages may reference, unchecked (repeatable); any other host that is neither a CDN base nor the instance refuses", EnvVars: []string{"LOCKSTEP_ALLOW_HOST"}},
		&cli.BoolFlag{Name: "asset-free-page", Usage: "the probed pages reference no asset, and that is expected: accept such a page (without it a page that references no asset proves nothing and refuses)", EnvVars: []string{"LOCKSTEP_ASSET_FREE_PAGE"}},
		allowLinkLocalFlag(),
		&cli.DurationFlag{Name: "timeout", Value: admission.DefaultTimeout, Usage: "the deadline of a check (for admit: of the whole gate, acting included)"},
		&cli.DurationFlag{Name: "tls-warn", Value: admission.DefaultTLSWarning, Usage: "warn of a certificate, of any endpoint the check touches, that expires within this (an expired or invalid one refuses)", EnvVars: []string{"LOCKSTEP_TLS_WARN"}},
		&cli.BoolFlag{Name: "require-image-signature", Usage: "verify the cosign signatures of the image this instance runs (the gate's platform must be signed), from the material embedded in the manifest, else from the registry", EnvVars: []string{"LOCKSTEP_REQUIRE_IMAGE_SIGNATURE"}},
		&cli.BoolFlag{Name: "require-embedded-signatures", Usage: "verify image signatures from the manifest's embedded material only: a manifest that embeds none for the image is refused, the registry never asked (implies --require-image-signature)", EnvVars: []string{"LOCKSTEP_REQUIRE_EMBEDDED_SIGNATURES"}},
		&cli.BoolFlag{Name: "require-provenance", Usage: "verify the build provenance of the image this instance runs from the attestations embedded in the manifest (record --embed-attestations), against its digests and release.source, with no registry request: none embedded, or one of another commit, repository, digest or builder, refuses (provenance)", EnvVars: []string{"LOCKSTEP_REQUIRE_PROVENANCE"}},
		provenanceKeyFlag(),
	), imageSignatureFlags()...)
}

// provenanceKeyFlag is --provenance-key: whose provenance attestations
// count, when they are signed with a key (keyless: identityFlags).
func provenanceKeyFlag() cli.Flag {
	return &cli.StringFlag{Name: "provenance-key", Usage: "the public `KEY` (PEM such as cosign.pub, or a KMS URI) the builder signs provenance attestations with; without it, the keyless --certificate-identity[-regexp] and --certificate-oidc-issuer[-regexp] name the builder", EnvVars: []string{"LOCKSTEP_PROVENANCE_KEY"}}
}

// stateFlags are the trusted-state flags of every consumer.
func stateFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "state-dir", Value: trusted.DefaultDir, Usage: "where the trusted state (the highest generation accepted per release) is kept", EnvVars: []string{"LOCKSTEP_STATE_DIR"}},
		&cli.DurationFlag{Name: "max-age", Usage: "when the store is unreachable, accept the last accepted manifest if it was accepted at most this long ago (0: refuse)", EnvVars: []string{"LOCKSTEP_MAX_AGE"}},
	}
}

// storeURLFlag is --store, required by the store's own commands.
func storeURLFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "store", Usage: "the manifest store: file:///DIR, a directory, or s3://BUCKET/PREFIX", EnvVars: []string{"LOCKSTEP_STORE"}, Required: true}
}

func storeChannelFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "channel", Value: store.DefaultChannel, Usage: "the channel", EnvVars: []string{"LOCKSTEP_CHANNEL"}}
}

func storeReleaseFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "release", Usage: "the release name", EnvVars: []string{"LOCKSTEP_RELEASE"}, Required: true}
}

// storeFlags are --store (optional here) and --channel, for a command
// that can read a store without being a consumer (record --generation
// auto).
func storeFlags() []cli.Flag {
	url := storeURLFlag()
	url.Required = false
	return []cli.Flag{url, storeChannelFlag()}
}

func storeByFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "by", Usage: "who moves the channel, recorded in the pointer (default: the GitHub Actions run, or user@host)", EnvVars: []string{"LOCKSTEP_PUBLISHER"}}
}

// allowUnsignedFlag is --allow-unsigned of the commands that publish.
func allowUnsignedFlag() *cli.BoolFlag {
	return &cli.BoolFlag{Name: "allow-unsigned", Usage: "publish a manifest that has no signature (consumers that require signatures refuse it)"}
}

// keylessFlags are the flags of keyless signing, for sign and rollback.
func keylessFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "keyless", Usage: "sign with the CI's OIDC identity through Fulcio and Rekor (GitHub Actions: permissions id-token: write)"},
		&cli.StringFlag{Name: "identity-token", Usage: "keyless: the OIDC identity token (default: from the environment)", EnvVars: []string{"SIGSTORE_ID_TOKEN"}},
		&cli.StringFlag{Name: "signing-config", Usage: "keyless: a Sigstore signing config file naming Fulcio and Rekor (default: the public-good instance's, from TUF)"},
		&cli.StringFlag{Name: "trusted-root", Usage: "keyless: a Sigstore trusted root file (default: from TUF)"},
	}
}

// allowLinkLocalFlag lifts the gate's refusal to contact link-local and
// metadata addresses.
func allowLinkLocalFlag() cli.Flag {
	return &cli.BoolFlag{Name: "allow-link-local", Usage: "let the manifest URL, probes, CDN and agents be link-local or metadata addresses (169.254.0.0/16, fe80::/10, fd00:ec2::254), which are refused without it", EnvVars: []string{"LOCKSTEP_ALLOW_LINK_LOCAL"}}
}

// acceptFlags are the flags of a command that accepts a manifest for a
// consumer (fleet check, the webhook): where it comes from, whom to trust.
func acceptFlags() []cli.Flag { return slices.Concat(sourceFlags(), trustFlags()) }

// consumerFlags are the flags of an admission check, the same for admit
// and the agent: acceptFlags and checkFlags.
func consumerFlags() []cli.Flag { return slices.Concat(acceptFlags(), checkFlags()) }
