package docs

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
)

// command is one shell command of a document: its lines (continuations
// and a here-document included) and the exit code it must give.
type command struct {
	text string
	line int // in the document, 1-based
	exit int
}

var exitMark = regexp.MustCompile(`\s#\s*exit (\d+)\s*$`)
var heredoc = regexp.MustCompile(`<<-?\s*'?([A-Za-z_]+)'?`)

// shellCommands returns the commands of doc's ```sh blocks, in order. A
// command is a line that is not blank and not a comment, with the lines
// it continues onto (a trailing backslash) and its here-document. It must
// exit 0 unless its last line ends with "# exit N".
func shellCommands(doc string) ([]command, error) {
	var out []command
	sc := bufio.NewScanner(strings.NewReader(doc))
	n, in := 0, false
	var cur *command
	var until string // the end of a here-document being read
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```sh":
			in = true
			continue
		case !in:
			continue
		case until != "":
			cur.text += "\n" + line
			if trimmed == until {
				until = ""
				out, cur = append(out, *cur), nil
			}
			continue
		case trimmed == "```":
			if cur != nil {
				return nil, fmt.Errorf("line %d: the block ends inside a command", n)
			}
			in = false
			continue
		case cur == nil && (trimmed == "" || strings.HasPrefix(trimmed, "#")):
			continue
		}
		if cur == nil {
			cur = &command{line: n}
		} else {
			cur.text += "\n"
		}
		cur.text += line
		if m := exitMark.FindStringSubmatch(line); m != nil {
			cur.exit, _ = strconv.Atoi(m[1])
		}
		switch {
		case strings.HasSuffix(line, `\`):
		case heredoc.MatchString(line):
			until = heredoc.FindStringSubmatch(line)[1]
		default:
			out, cur = append(out, *cur), nil
		}
	}
	if in || cur != nil {
		return nil, fmt.Errorf("the document ends inside a block")
	}
	return out, sc.Err()
}

func TestShellCommands(t *testing.T) {
	doc := "text\n```sh\n# a comment\necho a \\\n  b\ncat > f <<'EOF'\nx\n\nEOF\n\nfalse # exit 1\n```\n```go\nnot run\n```\n"
	got, err := shellCommands(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []command{{"echo a \\\n  b", 4, 0}, {"cat > f <<'EOF'\nx\n\nEOF", 6, 0}, {"false # exit 1", 11, 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("shellCommands = %+v, want %+v", got, want)
	}
}

// TestQuickstart runs every command of quickstart.md in order, in one
// shell, with the real servers it starts (docker-registry and nginx, on
// free loopback ports in place of the document's), and checks each
// command's exit code.
func TestQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a registry and nginx")
	}
	for _, bin := range []string{"docker-registry", "nginx", "crane", "curl", "tar", "bash"} {
		testenv.Require(t, bin)
	}
	raw, err := os.ReadFile("quickstart.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, port := range []string{"5000", "8081", "8082"} {
		if !strings.Contains(doc, "127.0.0.1:"+port) {
			t.Fatalf("quickstart.md no longer uses 127.0.0.1:%s; update this test", port)
		}
		doc = strings.ReplaceAll(doc, "127.0.0.1:"+port, fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)))
	}
	cmds, err := shellCommands(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) < 20 {
		t.Fatalf("quickstart.md has %d commands; the parser lost some", len(cmds))
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testenv.Lockstep(t), filepath.Join(bin, "lockstep")); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	rcs := filepath.Join(dir, "exit-codes")
	var script strings.Builder
	script.WriteString("exec 3>" + rcs + "\n")
	for i, c := range cmds {
		fmt.Fprintf(&script, "printf '\\n=== [%d] line %d\\n'\n%s\necho $? >&3\n", i, c.line, c.text)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc")
	cmd.Dir = home
	cmd.Stdin = strings.NewReader(script.String())
	cmd.Env = append(os.Environ(), "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"DOCKER_CONFIG="+filepath.Join(home, ".docker"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	// The servers the document starts in the background are in the
	// shell's process group: end them all, whatever happened.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	runErr := cmd.Wait()

	got, _ := os.ReadFile(rcs)
	codes := strings.Fields(string(got))
	for i, c := range cmds {
		if i >= len(codes) {
			t.Fatalf("the shell stopped before command %d (line %d of quickstart.md): %v\n%s", i, c.line, runErr, out.String())
		}
		if codes[i] != strconv.Itoa(c.exit) {
			t.Errorf("quickstart.md line %d: exit %s, want %d:\n%s", c.line, codes[i], c.exit, c.text)
		}
	}
	if t.Failed() {
		t.Logf("the transcript:\n%s", out.String())
	}
}
