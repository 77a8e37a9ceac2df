// Command gendocs writes lockstep's command reference from the CLI
// definitions themselves: one markdown page per command under
// docs/reference/ and one man page per command under docs/man/ (section 1,
// packaged into the .deb, the .rpm and the archives). Run it from the
// repository root after changing a command, a flag or a usage string:
//
//	go run ./cmd/lockstep/internal/gendocs
//
// Its test fails when the committed pages differ from what it would write.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cpuguy83/go-md2man/v2/md2man"
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/app"
)

// Where the pages go, relative to the repository root.
const (
	referenceDir = "docs/reference"
	manDir       = "docs/man"
)

// regenerate is the command that rewrites the pages, named in every page.
const regenerate = "go run ./cmd/lockstep/internal/gendocs"

// cacheSentinel stands in for $XDG_CACHE_HOME while the app is built, so
// that a default derived from the user's cache directory reads the same on
// every machine.
const cacheSentinel = "/XDG_CACHE_HOME.gendocs"

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	pages, err := Pages()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
	if err := write(*root, pages); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

// write replaces the generated directories' pages with pages: files it no
// longer generates are removed, so a removed command loses its page.
func write(root string, pages map[string][]byte) error {
	for _, dir := range []string{referenceDir, manDir} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			return err
		}
		old, err := filepath.Glob(filepath.Join(root, dir, "*"))
		if err != nil {
			return err
		}
		for _, f := range old {
			rel, _ := filepath.Rel(root, f)
			if _, keep := pages[filepath.ToSlash(rel)]; !keep && generated(f) {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
		}
	}
	names := make([]string, 0, len(pages))
	for name := range pages {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), pages[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generated reports whether f is a page gendocs writes (by its name).
func generated(f string) bool {
	base := filepath.Base(f)
	return strings.HasPrefix(base, "lockstep") && (strings.HasSuffix(base, ".md") || strings.HasSuffix(base, ".1"))
}

// Pages renders every page, keyed by its slash-separated path relative to
// the repository root.
func Pages() (map[string][]byte, error) {
	a, err := newApp()
	if err != nil {
		return nil, err
	}
	pages := map[string][]byte{}
	top := command{path: []string{a.Name}, usage: a.Usage, flags: a.Flags, subs: visible(a.Commands)}
	var walk func(c command) error
	walk = func(c command) error {
		pages[referenceDir+"/"+c.file()+".md"] = []byte(c.markdown())
		man, err := c.man()
		if err != nil {
			return err
		}
		pages[manDir+"/"+c.manName()+".1"] = man
		for _, s := range c.subs {
			if err := walk(child(c, s)); err != nil {
				return err
			}
		}
		return nil
	}
	return pages, walk(top)
}

// newApp builds the app as the binary does, with the cache directory
// pointed at the sentinel.
func newApp() (*cli.App, error) {
	old, had := os.LookupEnv("XDG_CACHE_HOME")
	if err := os.Setenv("XDG_CACHE_HOME", cacheSentinel); err != nil {
		return nil, err
	}
	defer func() {
		if had {
			os.Setenv("XDG_CACHE_HOME", old)
		} else {
			os.Unsetenv("XDG_CACHE_HOME")
		}
	}()
	return app.New(), nil
}

// command is one page: the app itself or a (sub)command.
type command struct {
	path                   []string // "lockstep", "manifest", "verify"
	usage, usageText, args string
	description            string
	flags                  []cli.Flag
	subs                   []*cli.Command
	aliases                []string
}

func child(parent command, c *cli.Command) command {
	return command{
		path:        append(append([]string(nil), parent.path...), c.Name),
		usage:       c.Usage,
		usageText:   c.UsageText,
		args:        c.ArgsUsage,
		description: c.Description,
		flags:       c.Flags,
		subs:        visible(c.Subcommands),
		aliases:     c.Aliases,
	}
}

func visible(cmds []*cli.Command) []*cli.Command {
	var out []*cli.Command
	for _, c := range cmds {
		if !c.Hidden && c.Name != "help" {
			out = append(out, c)
		}
	}
	return out
}

func (c command) name() string    { return strings.Join(c.path, " ") }
func (c command) file() string    { return strings.Join(c.path, "_") }
func (c command) manName() string { return strings.Join(c.path, "-") }
func (c command) top() bool       { return len(c.path) == 1 }

// synopsis is the command line, as --help's USAGE says it.
func (c command) synopsis() string {
	if c.usageText != "" {
		return strings.Trim(c.usageText, "\n")
	}
	s := c.name()
	switch {
	case c.top():
		s += " [global options] command [command options]"
	case len(c.subs) > 0:
		s += " command [command options]"
	default:
		s += " [command options]"
	}
	if a := strings.TrimSpace(c.args); a != "" {
		s += " " + a
	}
	return s
}

// flagDoc is what the pages say of one flag.
type flagDoc struct {
	names       []string // with their dashes
	value       bool
	def, env    string
	usage       string
	placeholder string
}

func docs(flags []cli.Flag) []flagDoc {
	var out []flagDoc
	for _, f := range flags {
		d, ok := f.(cli.DocGenerationFlag)
		if !ok {
			continue
		}
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		fd := flagDoc{value: d.TakesValue(), usage: d.GetUsage()}
		for _, n := range d.Names() {
			n = strings.TrimSpace(n)
			if len(n) > 1 {
				fd.names = append(fd.names, "--"+n)
			} else {
				fd.names = append(fd.names, "-"+n)
			}
		}
		if fd.value {
			fd.def = d.GetDefaultText()
			if fd.def == "" {
				fd.def = d.GetValue()
			}
			fd.def = strings.ReplaceAll(fd.def, cacheSentinel, "$XDG_CACHE_HOME")
			if u, err := strconv.Unquote(fd.def); err == nil && strings.HasPrefix(fd.def, `"`) {
				fd.def = u
			}
			fd.placeholder, fd.usage = unquoteUsage(fd.usage)
			if fd.placeholder == "" {
				fd.placeholder = "value"
			}
		}
		var envs []string
		for _, e := range d.GetEnvVars() {
			envs = append(envs, "$"+e)
		}
		fd.env = strings.Join(envs, ", ")
		out = append(out, fd)
	}
	return out
}

// unquoteUsage splits a usage string as urfave/cli's help does: the first
// back-quoted word is the value's placeholder, kept in the text without
// its quotes.
func unquoteUsage(usage string) (placeholder, text string) {
	i := strings.IndexByte(usage, '`')
	if i < 0 {
		return "", usage
	}
	j := strings.IndexByte(usage[i+1:], '`')
	if j < 0 {
		return "", usage
	}
	name := usage[i+1 : i+1+j]
	return name, usage[:i] + name + usage[i+1+j+1:]
}

// spelled is the flag as --help spells it: --name PLACEHOLDER, --alias PLACEHOLDER.
func (f flagDoc) spelled() []string {
	var out []string
	for _, n := range f.names {
		if f.value {
			n += " " + f.placeholder
		}
		out = append(out, n)
	}
	return out
}

const header = "<!-- Generated from the CLI definitions by `" + regenerate + "`. DO NOT EDIT. -->\n\n"

func (c command) markdown() string {
	var b strings.Builder
	b.WriteString(header)
	fmt.Fprintf(&b, "# %s\n\n", c.name())
	if c.usage != "" {
		fmt.Fprintf(&b, "%s\n\n", capital(c.usage))
	}
	if len(c.aliases) > 0 {
		fmt.Fprintf(&b, "Also spelled: %s.\n\n", code(c.aliases...))
	}
	fmt.Fprintf(&b, "## Usage\n\n```text\n%s\n```\n\n", c.synopsis())
	if c.description != "" {
		fmt.Fprintf(&b, "## Description\n\n```text\n%s\n```\n\n", strings.Trim(c.description, "\n"))
	}
	if len(c.subs) > 0 {
		b.WriteString("## Commands\n\n| command | what it does |\n| --- | --- |\n")
		for _, s := range c.subs {
			sc := child(c, s)
			fmt.Fprintf(&b, "| [`%s`](%s.md) | %s |\n", sc.name(), sc.file(), cell(s.Usage))
		}
		b.WriteString("\n")
	}
	if fl := docs(c.flags); len(fl) > 0 {
		if c.top() {
			b.WriteString("## Global options\n\nEvery command takes them, before or after its own.\n\n")
		} else {
			b.WriteString("## Options\n\n")
		}
		b.WriteString("| flag | default | environment | meaning |\n| --- | --- | --- | --- |\n")
		for _, f := range fl {
			def := ""
			if f.def != "" {
				def = "`" + f.def + "`"
			}
			env := ""
			if f.env != "" {
				env = "`" + f.env + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", code(f.spelled()...), cell(def), cell(env), cell(f.usage))
		}
		b.WriteString("\n")
	}
	b.WriteString("## See also\n\n")
	if c.top() {
		b.WriteString("The guides: [the documentation](../README.md). Exit codes: 0 verified, 1 mismatch (refused), " +
			"2 usage or invalid input, 3 could not verify.\n")
	} else {
		parent := command{path: c.path[:len(c.path)-1]}
		fmt.Fprintf(&b, "[`%s`](%s.md)", parent.name(), parent.file())
		if g, ok := guides[strings.Join(c.path[1:], " ")]; ok {
			fmt.Fprintf(&b, ", and the guide: [%s](../%s)", g.title, g.page)
		}
		b.WriteString(".\n")
	}
	return b.String()
}

// code renders each s as inline code, comma-separated.
func code(s ...string) string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = "`" + x + "`"
	}
	return strings.Join(out, ", ")
}

// cell makes s safe inside a markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// man renders the page in md2man's markdown, then to roff.
func (c command) man() ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%% %s 1\n\n", strings.ToUpper(c.manName()))
	fmt.Fprintf(&b, "# NAME\n\n%s - %s\n\n", c.manName(), manEscape(c.usage))
	fmt.Fprintf(&b, "# SYNOPSIS\n\n")
	for _, line := range strings.Split(c.synopsis(), "\n") {
		fmt.Fprintf(&b, "%s\n\n", manEscape(line))
	}
	if c.description != "" {
		fmt.Fprintf(&b, "# DESCRIPTION\n\n")
		for _, para := range strings.Split(strings.Trim(c.description, "\n"), "\n\n") {
			fmt.Fprintf(&b, "%s\n\n", manEscape(para))
		}
	}
	if len(c.subs) > 0 {
		b.WriteString("# COMMANDS\n\n")
		for _, s := range c.subs {
			sc := child(c, s)
			fmt.Fprintf(&b, "**%s**\n: %s. See **%s**(1).\n\n", manEscape(sc.name()), manEscape(s.Usage), manEscape(sc.manName()))
		}
	}
	if fl := docs(c.flags); len(fl) > 0 {
		if c.top() {
			b.WriteString("# GLOBAL OPTIONS\n\n")
		} else {
			b.WriteString("# OPTIONS\n\n")
		}
		for _, f := range fl {
			var names []string
			for _, s := range f.spelled() {
				names = append(names, "**"+manEscape(s)+"**")
			}
			text := manEscape(f.usage)
			if f.def != "" {
				text += " (default: " + manEscape(f.def) + ")"
			}
			if f.env != "" {
				text += " [" + manEscape(f.env) + "]"
			}
			fmt.Fprintf(&b, "%s\n: %s\n\n", strings.Join(names, ", "), text)
		}
	}
	b.WriteString("# EXIT STATUS\n\n0 verified or done; 1 a mismatch or a refusal; 2 a usage error or invalid input (nothing " +
		"was written); 3 could not verify (a dependency failed).\n\n")
	b.WriteString("# SEE ALSO\n\n")
	var see []string
	if !c.top() {
		see = append(see, "**"+manEscape(command{path: c.path[:len(c.path)-1]}.manName())+"**(1)")
	}
	for _, s := range c.subs {
		see = append(see, "**"+manEscape(child(c, s).manName())+"**(1)")
	}
	see = append(see, "https://github.com/lockstep-dev/lockstep/tree/main/docs")
	b.WriteString(strings.Join(see, ", ") + "\n")
	return asciiRoff(md2man.Render([]byte(b.String()))), nil
}

// asciiRoff spells every character beyond ASCII as a groff escape
// (\[u2026] for …), which every troff reads whatever its input encoding.
func asciiRoff(roff []byte) []byte {
	var b strings.Builder
	for _, r := range string(roff) {
		if r < 0x80 {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, `\[u%04X]`, r)
		}
	}
	return []byte(b.String())
}

// manEscape keeps md2man from reading the CLI's text as markdown.
func manEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "<", `\<`, ">", `\>`, "[", `\[`, "]", `\]`, "#", `\#`)
	return r.Replace(s)
}

// guides names the guide page a command's reference page links to, by the
// command's path below lockstep.
var guides = map[string]struct{ title, page string }{
	"pin":               {"pinning images", "pin.md"},
	"record":            {"recording a release", "record.md"},
	"manifest":          {"recording a release", "record.md#inspecting-manifests"},
	"manifest verify":   {"signatures", "signatures.md#lockstep-manifest-verify"},
	"manifest get":      {"stores", "stores.md#commands"},
	"manifest validate": {"recording a release", "record.md#inspecting-manifests"},
	"manifest digest":   {"the manifest format", "manifest-format.md#the-digest"},
	"manifest show":     {"recording a release", "record.md#inspecting-manifests"},
	"manifest diff":     {"recording a release", "record.md#inspecting-manifests"},
	"cdn":               {"checking the CDN", "cdn.md"},
	"cdn check":         {"checking the CDN", "cdn.md"},
	"sign":              {"signatures", "signatures.md#lockstep-sign"},
	"keygen":            {"signatures", "signatures.md#keys"},
	"publish":           {"stores", "stores.md#commands"},
	"status":            {"stores", "stores.md#commands"},
	"rollback":          {"stores", "stores.md#commands"},
	"gc":                {"stores", "stores.md#commands"},
	"admit":             {"the boot gate", "boot-gate.md"},
	"webhook":           {"Kubernetes", "kubernetes.md"},
	"agent":             {"the fleet", "fleet.md#the-agent-lockstep-agent"},
	"fleet":             {"the fleet", "fleet.md"},
	"fleet check":       {"the fleet", "fleet.md#the-fleet-check-lockstep-fleet-check"},
	"demo":              {"the quickstart", "quickstart.md#the-same-story-in-one-command-lockstep-demo"},
	"version":           {"releases", "release.md"},
}
