package app

import "github.com/urfave/cli/v2"

// withNames returns flags with each one's names computed once. urfave/cli
// computes a flag's names on every call of Names (a regular expression
// over each name), and calls it for every flag of the command on each
// IsSet, which its Command.Run calls for every flag (runFlagActions):
// about 1,100 times, 2 ms, for a command of 47 flags. Each wrapper embeds
// the flag, so every method and optional interface is the flag's own but
// Names; the wrappers are pointers, so that flags still compare. Not for printing help: urfave/cli's help asks for *cli.BoolFlag
// by type (its default text), so a command whose help is asked keeps its
// flags as they are.
func withNames(flags []cli.Flag) []cli.Flag {
	out := make([]cli.Flag, len(flags))
	for i, f := range flags {
		if f == cli.HelpFlag {
			// urfave/cli finds it by identity (hasFlag), or adds it again.
			out[i] = f
			continue
		}
		names := f.Names()
		switch f := f.(type) {
		case *cli.StringFlag:
			out[i] = &stringFlag{f, names}
		case *cli.BoolFlag:
			out[i] = &boolFlag{f, names}
		case *cli.DurationFlag:
			out[i] = &durationFlag{f, names}
		case *cli.IntFlag:
			out[i] = &intFlag{f, names}
		case *cli.StringSliceFlag:
			out[i] = &stringSliceFlag{f, names}
		case *cli.Float64Flag:
			out[i] = &float64Flag{f, names}
		case *cli.GenericFlag:
			out[i] = &genericFlag{f, names}
		case *cli.Uint64Flag:
			out[i] = &uint64Flag{f, names}
		default:
			out[i] = f
		}
	}
	return out
}

type stringFlag struct {
	*cli.StringFlag
	names []string
}

func (f *stringFlag) Names() []string { return f.names }

type boolFlag struct {
	*cli.BoolFlag
	names []string
}

func (f *boolFlag) Names() []string { return f.names }

type durationFlag struct {
	*cli.DurationFlag
	names []string
}

func (f *durationFlag) Names() []string { return f.names }

type intFlag struct {
	*cli.IntFlag
	names []string
}

func (f *intFlag) Names() []string { return f.names }

type stringSliceFlag struct {
	*cli.StringSliceFlag
	names []string
}

func (f *stringSliceFlag) Names() []string { return f.names }

type float64Flag struct {
	*cli.Float64Flag
	names []string
}

func (f *float64Flag) Names() []string { return f.names }

type genericFlag struct {
	*cli.GenericFlag
	names []string
}

func (f *genericFlag) Names() []string { return f.names }

type uint64Flag struct {
	*cli.Uint64Flag
	names []string
}

func (f *uint64Flag) Names() []string { return f.names }
