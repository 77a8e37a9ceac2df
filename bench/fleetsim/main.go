// Command fleetsim simulates a fleet of lockstep agents for bench/fleet.sh:
// one process listening on N loopback ports, each port one instance that
// serves a real agent status document (rendered by admission/agent) at
// /v1/status. A share of the instances runs a re-pushed digest and serves
// an asset ID the manifest lacks.
//
//	fleetsim -n 10000 -dir DIR [-first-port 12000] [-divergent 0.01]
//
// It writes DIR/release.json (the manifest) and DIR/targets.txt (one
// host:port a line), prints "ready" on stdout once every port listens, and
// serves until killed. Ports that cannot be bound are skipped. Listening
// ports are taken below the ephemeral range so that the check's own
// connections do not compete with them.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/agent"
	"github.com/lockstep-dev/lockstep/internal/fleettest"
	"github.com/lockstep-dev/lockstep/manifest"
)

func main() {
	n := flag.Int("n", 10000, "instances")
	dir := flag.String("dir", ".", "where to write release.json and targets.txt")
	first := flag.Int("first-port", 12000, "first port to try")
	divergent := flag.Float64("divergent", 0.01, "share of instances on a re-pushed digest")
	flag.Parse()
	if err := run(*n, *dir, *first, *divergent); err != nil {
		fmt.Fprintln(os.Stderr, "fleetsim:", err)
		os.Exit(1)
	}
}

func run(n int, dir string, first int, divergent float64) error {
	raw, err := fleettest.Manifest(7).Indent()
	if err != nil {
		return err
	}
	m, err := manifest.NewSigned(raw, filepath.Join(dir, "release.json"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(m.Location, raw, 0o644); err != nil {
		return err
	}
	good, bad := status(m, false), status(m, true)
	every := 0
	if divergent > 0 {
		every = int(1 / divergent)
	}
	bodies := map[int][]byte{}
	var targets strings.Builder
	var listeners []net.Listener
	for port := first; len(listeners) < n && port < 32768; port++ {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		i := len(listeners)
		st := good
		if every > 0 && i%every == every-1 {
			st = bad
		}
		st.Instance = agent.Identity{InstanceID: fmt.Sprintf("i-%017x", i), Hostname: fmt.Sprintf("ip-10-0-%d-%d", i/256, i%256), Source: "imds"}
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		bodies[port] = b
		listeners = append(listeners, ln)
		fmt.Fprintf(&targets, "127.0.0.1:%d\n", port)
	}
	if len(listeners) < n {
		return fmt.Errorf("bound %d ports of %d", len(listeners), n)
	}
	if err := os.WriteFile(filepath.Join(dir, "targets.txt"), []byte(targets.String()), 0o644); err != nil {
		return err
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		tcp, _ := addr.(*net.TCPAddr)
		if tcp == nil || r.URL.Path != "/v1/status" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(bodies[tcp.Port])
	})}
	for _, ln := range listeners {
		go srv.Serve(ln)
	}
	fmt.Println("ready")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return srv.Close()
}

// status renders an agent's status after one check: admitted on the
// release, or refused on a re-pushed digest serving an unknown asset.
func status(m *manifest.Signed, repushed bool) agent.Status {
	r := agent.Result{
		Decision: admission.Decision{Allowed: true, Findings: []admission.Finding{}},
		Image:    "web", Platform: "linux/amd64", Running: fleettest.Amd64, RunningSource: "docker:web",
		Manifest: m, Probed: true, Served: fleettest.Assets,
	}
	if repushed {
		r.Running = fleettest.Repushed
		r.Served = append([]string{"assets/app-ffff.js"}, fleettest.Assets[1:]...)
		r.Decision = admission.Decision{Findings: []admission.Finding{
			{Kind: admission.KindImageDigestMismatch, Severity: admission.Refuse, Message: "re-pushed"},
			{Kind: admission.KindAssetNotInManifest, Severity: admission.Refuse, Subject: "assets/app-ffff.js", Message: "unknown asset"},
		}}
	}
	a := agent.New(agent.Config{Checker: agent.CheckerFunc(func(context.Context) agent.Result { return r })})
	a.CheckNow(context.Background())
	return a.Status()
}
