package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/regfile"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// maxReportSize bounds a fleet report read by gc --in-use, in bytes.
const maxReportSize = 64 << 20

// storeBy is --by or a default naming the CI run (GITHUB_* as the run
// finds them: inv.getenv) or the user.
func storeBy(c flagValues, inv *invocation) string {
	if by := c.String("by"); by != "" {
		return by
	}
	if inv.getenv("GITHUB_ACTIONS") == "true" {
		return "github-actions:" + inv.getenv("GITHUB_REPOSITORY") + "#" + inv.getenv("GITHUB_RUN_ID")
	}
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
}

func publishCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:      "publish",
		Usage:     "store a manifest (with MANIFEST.sig and MANIFEST.sigstore.json beside it) and move a channel to it",
		ArgsUsage: "MANIFEST",
		Description: describe("Validates MANIFEST, stores it (content-addressed) with its signature files and moves the\n"+
			"channel to it by compare-and-swap: a generation that is not above the channel's is refused, so a stale\n"+
			"pipeline never replaces a newer release. Prints the new pointer.",
			[]string{
				"lockstep publish --store s3://releases/lockstep release.json",
				"lockstep publish --store file:///srv/lockstep --channel staging --by \"$GITHUB_ACTOR\" release.json",
				"lockstep publish --store file:///srv/lockstep --allow-unsigned --format json release.json",
			},
			exits{
				0: "published",
				1: "the generation is not above the channel's (a stale or concurrent publisher)",
				2: "a manifest that is not valid or not signed (without --allow-unsigned), or a bad flag",
				3: "the store failed",
			}),
		Flags: []cli.Flag{storeURLFlag(), storeChannelFlag(), storeByFlag(), allowUnsignedFlag(), formatFlag("text", "json")},
		Action: func(c *cli.Context) error {
			f, arg, err := formatAndOneArg(c, "publish takes one MANIFEST file")
			if err != nil {
				return err
			}
			s, err := storeReadManifest(c.Context, arg)
			if err != nil {
				return err
			}
			if err := allowUnsigned(c, inv, c.Command.Name, store.RequireSigned(s)); err != nil {
				return err
			}
			st, err := inv.openStore(c.Context, c.String("store"), nil)
			if err != nil {
				return err
			}
			p, err := store.Publish(c.Context, st, s, c.String("channel"), storeBy(c, inv))
			if err != nil {
				return err
			}
			if f == "json" {
				return storeJSON(c.App.Writer, p)
			}
			_, err = fmt.Fprintf(c.App.Writer, "%s %s generation %d %s\n", p.Release, p.Channel, p.Generation, p.Digest)
			return err
		},
	}
}

// allowUnsigned turns an *store.UnsignedError into a usage error that
// names the flags, or into a warning with --allow-unsigned; command is the
// command's name.
func allowUnsigned(c flagValues, inv *invocation, command string, err error) error {
	var ue *store.UnsignedError
	if !errors.As(err, &ue) {
		return err
	}
	if c.Bool("allow-unsigned") {
		inv.log.Warn("publishing an unsigned manifest (--allow-unsigned): consumers that require signatures refuse it", "release", ue.Release)
		return nil
	}
	how := "sign it (lockstep sign --key KEY FILE, or record --sign-key KEY)"
	if command == "rollback" {
		how = "pass --sign-key KEY to sign the new manifest"
	}
	return usage(fmt.Errorf("%w: %s, or pass --allow-unsigned", err, how))
}

// storeReadManifest reads a manifest file with its signature (FILE.sig)
// and Sigstore bundle (FILE.sigstore.json), where they are. A file that
// is missing or not a regular file (a FIFO, a directory) is invalid input.
func storeReadManifest(ctx context.Context, path string) (*manifest.Signed, error) {
	s, err := manifest.FileSource{Path: path}.Fetch(ctx)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, usage(err)
	}
	return s, err
}

func statusCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show a channel: its manifest digest, generation and history",
		Description: describe("Prints the channel's digest and generation, when and by whom it moved, the manifest's\n"+
			"createdAt, expiresAt, signature and source, and the channel's history.",
			[]string{
				"lockstep status --store s3://releases/lockstep --release store-web",
				"lockstep status --store file:///srv/lockstep --release store-web --channel staging --format json",
			},
			exits{
				0: "shown",
				2: "a bad flag",
				3: "no such release or channel (the message lists what the store holds), a corrupt store, or a store that could not be read",
			}),
		Flags: []cli.Flag{storeURLFlag(), storeReleaseFlag(), storeChannelFlag(), formatFlag("text", "json")},
		Action: func(c *cli.Context) error {
			f, err := format(c, "text", "json")
			if err != nil {
				return err
			}
			st, err := inv.openStore(c.Context, c.String("store"), nil)
			if err != nil {
				return err
			}
			r, err := store.Status(c.Context, st, c.String("release"), c.String("channel"))
			if err != nil {
				return err
			}
			return r.Write(c.App.Writer, f)
		},
	}
}

func rollbackCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "rollback",
		Usage: "publish an earlier release again, as a new, higher generation, signed",
		Description: describe("The new manifest has the content of --to, a generation above every channel's, and a new createdAt.\n"+
			"The old signature covers the old bytes, so the new manifest is signed with --sign-key or --keyless\n"+
			"before it is published; an unsigned rollback is refused (exit 2) unless --allow-unsigned.\n"+
			"--output also writes it (with OUTPUT.sig and OUTPUT.sigstore.json where signed).",
			[]string{
				"lockstep rollback --store s3://releases/lockstep --release store-web --to 41 --sign-key cosign.key",
				"lockstep rollback --store s3://releases/lockstep --release store-web --to sha256:DIGEST --keyless",
				"lockstep rollback --store file:///srv/lockstep --release store-web --to 41 --sign-key cosign.key \\\n" +
					"  --no-publish --output rollback.json",
			},
			exits{
				0: "published (or, with --no-publish, written)",
				1: "the channel moved meanwhile",
				2: "a bad --to, an unsigned rollback without --allow-unsigned, or a key that does not load",
				3: "--to not found, or the store failed",
			}),
		Flags: append([]cli.Flag{
			storeURLFlag(), storeReleaseFlag(), storeChannelFlag(), storeByFlag(),
			&cli.StringFlag{Name: "to", Usage: "the release to go back to: a manifest digest (sha256:…) or a generation", Required: true},
			&cli.StringFlag{Name: "output", Usage: "also write the new manifest (and its signature files) to this file"},
			&cli.BoolFlag{Name: "no-publish", Usage: "only write --output: store nothing, move nothing"},
			&cli.StringFlag{Name: "sign-key", Usage: "sign the new manifest with this private `KEY` (cosign.key with COSIGN_PASSWORD, a PEM key, or a KMS URI)", EnvVars: []string{"LOCKSTEP_SIGN_KEY"}},
			allowUnsignedFlag(),
			formatFlag("text", "json"),
		}, keylessFlags()...),
		Action: func(c *cli.Context) error {
			f, err := format(c, "text", "json")
			if err != nil {
				return err
			}
			o, err := rollbackFromFlags(c.Context, c, inv)
			if err != nil {
				return err
			}
			st, err := inv.openStore(c.Context, c.String("store"), nil)
			if err != nil {
				return err
			}
			r, err := store.Rollback(c.Context, st, o)
			if err := allowUnsigned(c, inv, c.Command.Name, flagged(err, map[string]string{"To": "--to"})); err != nil {
				return err
			}
			if out := c.String("output"); out != "" {
				if _, err := manifest.WriteFile(out, r.Manifest, manifest.SidecarPaths{}); err != nil {
					return err
				}
			}
			if !r.Signed() {
				inv.log.Warn("the rollback manifest is unsigned: sign it before consumers that require signatures accept it", "digest", r.Manifest.Digest)
			}
			return r.Write(c.App.Writer, f)
		},
	}
}

// rollbackFromFlags is rollback's store.RollbackOptions, with the signer
// of --sign-key or --keyless.
func rollbackFromFlags(ctx context.Context, c flagValues, inv *invocation) (store.RollbackOptions, error) {
	if c.Bool("no-publish") && c.String("output") == "" {
		return store.RollbackOptions{}, usage(fmt.Errorf("--no-publish needs --output FILE"))
	}
	o := store.RollbackOptions{
		Release: c.String("release"), Channel: c.String("channel"), To: c.String("to"),
		By: storeBy(c, inv), Now: time.Now(), NoPublish: c.Bool("no-publish"), AllowUnsigned: c.Bool("allow-unsigned"),
	}
	if c.String("sign-key") != "" || c.Bool("keyless") {
		sign, _, err := signerFromFlags(ctx, c, inv, "sign-key", c.String("output"))
		if err != nil {
			return o, err
		}
		o.Sign = func(ctx context.Context, raw []byte) ([]byte, []byte, error) {
			sig, err := sign(ctx, raw)
			if err != nil {
				return nil, nil, err
			}
			return sig.Base64, sig.Bundle, nil
		}
	}
	return o, nil
}

func gcCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "delete old manifests of a release (a dry run unless --yes); never a live, recent or running one",
		Description: describe("Lists what it would delete and why each other manifest stays (a channel names it, one of\n"+
			"the newest --keep, running in the fleet by an --in-use report, ...); --yes deletes, logging each on stderr.",
			[]string{
				"lockstep gc --store s3://releases/lockstep --release store-web --keep 10",
				"lockstep gc --store s3://releases/lockstep --release store-web --keep 10 --in-use fleet.json --yes",
			},
			exits{
				0: "done (or, without --yes, what would be deleted listed)",
				2: "a bad flag, or an --in-use report that names nothing running",
				3: "a corrupt pointer or a store that failed",
			}),
		Flags: []cli.Flag{
			storeURLFlag(), storeReleaseFlag(),
			&cli.IntFlag{Name: "keep", Usage: "keep the newest N manifests by generation, whatever else holds", Required: true},
			inUseFlag("delete"),
			&cli.BoolFlag{Name: "yes", Usage: "delete; without it, only report what would be deleted"},
			formatFlag("text", "json"),
		},
		Action: func(c *cli.Context) error {
			f, err := format(c, "text", "json")
			if err != nil {
				return err
			}
			o := store.GCOptions{Keep: c.Int("keep"), Delete: c.Bool("yes"), Logger: inv.log}
			if err := addReports(c, &o, usage); err != nil {
				return err
			}
			st, err := inv.openStore(c.Context, c.String("store"), nil)
			if err != nil {
				return err
			}
			r, err := store.GC(c.Context, st, c.String("release"), o)
			err = flagged(err, gcFlags)
			if r != nil {
				if werr := r.Write(c.App.Writer, f); err == nil {
					err = werr
				}
			}
			return err
		},
	}
}

// addReports reads every --in-use fleet report into o (gc and cdn prune):
// a report that cannot be read is unread(err) (gc: a usage error, exit 2;
// cdn prune: exit 3), one that is not a report a usage error.
func addReports(c flagValues, o *store.GCOptions, unread func(error) error) error {
	for _, p := range c.StringSlice("in-use") {
		b, err := regfile.Read(p, maxReportSize)
		if err != nil {
			return unread(err)
		}
		if err := o.AddReport(b); err != nil {
			return fmt.Errorf("%s: %w", p, flagged(err, gcFlags))
		}
	}
	return nil
}

// inUseFlag is gc's and cdn prune's --in-use; del says what they never
// do ("delete", "delete the assets of").
func inUseFlag(del string) *cli.StringSliceFlag {
	return &cli.StringSliceFlag{Name: "in-use", Usage: "a fleet report (JSON): never " + del + " a \"manifestDigest\" it names, a manifest of an image digest an instance runs, or of a generation an instance runs (or a JSON list of manifest digests); repeatable"}
}

// gcFlags are the flags of gc's options.
var gcFlags = map[string]string{"Keep": "--keep", "InUse": "--in-use", "Running": "--in-use"}

func storeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
