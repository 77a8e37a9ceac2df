package app

import (
	"os"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/internal/demo"
)

func demoCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "replay the Epic 2021 outage end to end on this machine: pin, record (CDN-checked, signed), publish, boot gate, refusals",
		Description: describe("Needs no network and nothing installed: an in-memory registry, a CDN, instances and a file store on\n"+
			"loopback. Release v1 is recorded with --check-cdn, signed and published; an instance is admitted; the tag\n"+
			"is silently re-pushed; pin --previous refuses the moved tag; a new instance is refused (image-digest-mismatch,\n"+
			"asset-not-in-manifest, asset-missing-on-cdn); record --check-cdn refuses v2 until its new asset is on the CDN;\n"+
			"a stale publisher is refused; record --require-provenance binds the image's attested provenance to its\n"+
			"commit and refuses another. Every $ line is a lockstep command the demo runs (in process), followed by\n"+
			"all it wrote; each has COSIGN_PASSWORD, the demo key's password, in its own environment, and the\n"+
			"commands run with the demo's --log-level. Exits 0 when every step behaves as designed (every refusal\n"+
			"included, by the command's exit code and output), non-zero when one does not.",
			[]string{
				"lockstep demo",
				"lockstep demo --dir /tmp/lockstep-demo   # keep the files to look at afterwards",
				"lockstep --log-level debug demo   # every command it runs logs at debug too",
			},
			exits{
				0: "every step behaved as designed, every refusal included",
				1: "a step was refused that should have passed (the step is named on stderr)",
				2: "a bad flag or argument",
				3: "a step did not behave as designed for another reason (named on stderr)",
			}),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "keep the demo's files (build, CDN, store, keys, manifests) in `DIR` instead of a temporary directory"},
		},
		Action: func(c *cli.Context) error {
			return demo.Run(c.Context, c.App.Writer, demo.Options{
				Dir: c.String("dir"), Run: Run, LogLevel: c.String("log-level"),
				Inherited: setEnvVars(c.App.Flags, c.App.Commands),
			})
		},
	}
}

// envVars are the environment variables of flags and of cmds' flags, and
// of their subcommands', as declared (a name may repeat).
func envVars(flags []cli.Flag, cmds []*cli.Command) []string {
	var out []string
	for _, f := range flags {
		if ev, ok := f.(interface{ GetEnvVars() []string }); ok {
			out = append(out, ev.GetEnvVars()...)
		}
	}
	for _, c := range cmds {
		out = append(out, envVars(c.Flags, c.Subcommands)...)
	}
	return out
}

// setEnvVars are the envVars set in the process's environment, sorted,
// each once: the demo's commands read them as their flags' defaults.
func setEnvVars(flags []cli.Flag, cmds []*cli.Command) []string {
	var set []string
	for _, k := range envVars(flags, cmds) {
		if _, ok := os.LookupEnv(k); ok {
			set = append(set, k)
		}
	}
	slices.Sort(set)
	return slices.Compact(set)
}
