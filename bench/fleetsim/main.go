// Command fleetsim simulates a fleet of lockstep agents for bench/fleet.sh:
// one process listening on up to P loopback ports, serving N instances
// spread over them, each at its own status URL,
// http://127.0.0.1:PORT/i/INDEX/v1/status, with a real agent status
// document (rendered by admission/agent). A share of the instances runs a
// re-pushed digest and serves an asset ID the manifest lacks.
//
//	fleetsim -n 100000 -dir DIR [-ports 1000] [-first-port 12000] [-divergent 0.01]
//	fleetsim -fetch DIR/targets.txt [-concurrency 64]
//
// It writes DIR/release.json (the manifest) and DIR/targets.txt (one status
// URL a line), prints "ready" on stdout once every port listens, and serves
// until killed. Ports that cannot be bound are skipped. Listening ports are
// taken below the ephemeral range so that the check's own connections do
// not compete with them.
//
// Several instances share a port (N/P of them) so that a fleet of 100,000
// needs neither 100,000 file descriptors nor 100,000 listening sockets; the
// fleet check still opens one connection per instance (it asks every
// instance once, with Connection: close), so what it does is what it does
// against a real fleet. With -ports N every instance has a port of its own.
// Bodies are rendered per request from two templates, so the simulator's
// memory does not grow with N.
//
// With -fetch, fleetsim is instead the floor bench/fleet.sh compares the
// check with: it GETs every status URL of the file once (Connection:
// close, -concurrency at once), reads each body and throws it away, and
// prints how many answered 200. No decoding, comparison or report: what
// the check costs beyond asking every instance.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/agent"
	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
	"github.com/lockstep-dev/lockstep/manifest"
)

func main() {
	n := flag.Int("n", 10000, "instances")
	ports := flag.Int("ports", 1000, "ports to spread the instances over (at most n)")
	dir := flag.String("dir", ".", "where to write release.json and targets.txt")
	first := flag.Int("first-port", 12000, "first port to try")
	divergent := flag.Float64("divergent", 0.01, "share of instances on a re-pushed digest")
	fetchFile := flag.String("fetch", "", "fetch every status URL of this file (the floor), then exit")
	concurrency := flag.Int("concurrency", 64, "with -fetch: requests at once")
	flag.Parse()
	var err error
	if *fetchFile != "" {
		err = fetch(*fetchFile, *concurrency)
	} else {
		err = run(*n, *ports, *dir, *first, *divergent)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetsim:", err)
		os.Exit(1)
	}
}

// The placeholders of a status template, replaced per instance.
const (
	idMark   = "i-IIIIIIIIIIIIIIIII"
	hostMark = "ip-HHHHHHHHHHHH"
)

func run(n, ports int, dir string, first int, divergent float64) error {
	if n < 1 {
		return fmt.Errorf("-n %d: want at least one instance", n)
	}
	ports = max(1, min(ports, n))
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
	good, err := template(m, false)
	if err != nil {
		return err
	}
	bad, err := template(m, true)
	if err != nil {
		return err
	}
	every := 0
	if divergent > 0 {
		every = int(1 / divergent)
	}
	var listeners []net.Listener
	var addrs []string
	for port := first; len(listeners) < ports && port < 32768; port++ {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		listeners = append(listeners, ln)
		addrs = append(addrs, ln.Addr().String())
	}
	if len(listeners) < ports {
		return fmt.Errorf("bound %d ports of %d", len(listeners), ports)
	}
	// Instance i is on port i mod P, so that consecutive targets (the
	// check's workers take them in order) go to different ports.
	var targets bytes.Buffer
	for i := range n {
		fmt.Fprintf(&targets, "http://%s/i/%d/v1/status\n", addrs[i%ports], i)
	}
	if err := os.WriteFile(filepath.Join(dir, "targets.txt"), targets.Bytes(), 0o644); err != nil {
		return err
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/i/")
		index, tail, _ := strings.Cut(rest, "/")
		i, err := strconv.Atoi(index)
		if !ok || tail != "v1/status" || err != nil || i < 0 || i >= n {
			http.NotFound(w, r)
			return
		}
		t := good
		if every > 0 && i%every == every-1 {
			t = bad
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(t.render(i))
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

// statusTemplate is a status document cut at its two placeholders.
type statusTemplate struct{ a, b, c []byte }

func (t statusTemplate) render(i int) []byte {
	out := make([]byte, 0, len(t.a)+len(t.b)+len(t.c)+48)
	out = append(out, t.a...)
	out = fmt.Appendf(out, "i-%017x", i)
	out = append(out, t.b...)
	out = fmt.Appendf(out, "ip-10-%d-%d-%d", i>>16&255, i>>8&255, i&255)
	return append(out, t.c...)
}

// template renders an agent's status after one check (admitted on the
// release, or refused on a re-pushed digest serving an unknown asset) with
// placeholders for the instance ID and hostname.
func template(m *manifest.Signed, repushed bool) (statusTemplate, error) {
	st := status(m, repushed)
	st.Instance = agent.Identity{InstanceID: idMark, Hostname: hostMark, Source: "imds"}
	raw, err := json.Marshal(st)
	if err != nil {
		return statusTemplate{}, err
	}
	a, rest, ok1 := bytes.Cut(raw, []byte(idMark))
	b, c, ok2 := bytes.Cut(rest, []byte(hostMark))
	if !ok1 || !ok2 {
		return statusTemplate{}, fmt.Errorf("the status template lost its placeholders: %s", raw)
	}
	return statusTemplate{a, b, c}, nil
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

// fetch GETs every URL of the file once, concurrency at a time, and
// prints how many answered 200.
func fetch(file string, concurrency int) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	urls := strings.Fields(string(raw))
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var ok, failed atomic.Int64
	work := make(chan string)
	var wg sync.WaitGroup
	for range max(1, concurrency) {
		wg.Go(func() {
			for u := range work {
				resp, err := hc.Get(u)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					failed.Add(1)
					continue
				}
				ok.Add(1)
			}
		})
	}
	for _, u := range urls {
		work <- u
	}
	close(work)
	wg.Wait()
	fmt.Printf("%d of %d answered 200\n", ok.Load(), len(urls))
	if failed.Load() > 0 {
		return fmt.Errorf("%d of %d status URLs failed", failed.Load(), len(urls))
	}
	return nil
}
