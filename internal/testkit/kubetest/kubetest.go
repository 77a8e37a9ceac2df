package kubetest

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
)

// Version is the kube-apiserver the tests run, the k8s.io/kubernetes
// version scripts/install-deps.sh builds (KUBE_APISERVER_VERSION there).
const Version = "v1.34.4"

// The users of the token file.
const (
	// AdminUser is in system:masters: it may do anything.
	AdminUser = "admin"
	// User is in no group but system:authenticated: RBAC grants it
	// nothing until a RoleBinding names it (kind User, name "lockstep-user").
	User = "lockstep-user"
)

// Cluster is a running etcd and kube-apiserver.
type Cluster struct {
	// URL is the API server's base URL, https://127.0.0.1:PORT.
	URL string
	// CAFile is the PEM of the CA that signed the API server's certificate;
	// CA trusts it.
	CAFile string
	CA     *x509.CertPool
	// AdminToken and UserToken are the bearer tokens of AdminUser and User.
	AdminToken, UserToken string
	// AuditLog is the API server's audit log (JSON lines, one event per
	// request to pods, pods/status, pods/ephemeralcontainers and the apps
	// and batch groups, at the Metadata level, so with the annotations
	// that admission webhooks add). APIServerLog is its output.
	AuditLog, APIServerLog string
	// HTTP is a client that trusts CA (it sends no token by itself).
	HTTP *http.Client
	// Started is how long the start took, etcd to /readyz.
	Started time.Duration

	dir   string
	procs []*process
}

// apiserverBinary finds kube-apiserver (see the package's comment); ""
// when there is none.
func apiserverBinary() string {
	if p := os.Getenv("LOCKSTEP_TEST_KUBE_APISERVER"); p != "" {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
		return ""
	}
	if p, err := exec.LookPath("kube-apiserver"); err == nil {
		return p
	}
	cache, err := testenv.CacheDir()
	if err != nil {
		return ""
	}
	p := filepath.Join(cache, "tools", "kube-apiserver@"+Version, "kube-apiserver")
	if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// binaries returns the paths of kube-apiserver and etcd, or skips the test
// (fails it under LOCKSTEP_INTEGRATION=1) when one is missing.
func binaries(t testing.TB) (apiserver, etcd string) {
	t.Helper()
	etcd = testenv.Require(t, "etcd")
	apiserver = apiserverBinary()
	if apiserver == "" {
		why := "kube-apiserver " + Version + " is not installed: " + testenv.HowToInstall("kube-apiserver")
		if os.Getenv("LOCKSTEP_INTEGRATION") == "1" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return apiserver, etcd
}

// Start starts a control plane for t alone, stopped when t ends.
func Start(t testing.TB) *Cluster {
	t.Helper()
	apiserver, etcd := binaries(t)
	c, err := start(t, t.TempDir(), apiserver, etcd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.stop() })
	t.Logf("kubetest: etcd and kube-apiserver %s ready in %s", Version, c.Started.Round(100*time.Millisecond))
	return c
}

// shared is the package's control plane, started by the first Shared.
var shared struct {
	mu     sync.Mutex
	inMain bool
	c      *Cluster
	err    error
	tried  bool
	dir    string
}

// Run runs the package's tests (TestMain's m.Run) and then stops the
// control plane Shared started, if any; it returns m.Run's exit code.
func Run(m *testing.M) int {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.c != nil {
		shared.c.stop()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	return code
}

// Shared returns the package's control plane, starting it on the first
// call; Run, which the package's TestMain must call, stops it when the
// tests end. Tests that share it should use namespaces of their own. A
// start that failed fails every test that asks.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	apiserver, etcd := binaries(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.inMain {
		t.Fatal("kubetest.Shared: the package's TestMain must call kubetest.Run(m), which stops the shared control plane")
	}
	if !shared.tried {
		shared.tried = true
		shared.err = errors.New("kubetest: the shared control plane's start was cut short (see the first test that asked)")
		dir, err := os.MkdirTemp("", "kubetest-")
		if err != nil {
			shared.err = err
		} else {
			shared.dir = dir
			shared.c, shared.err = start(t, dir, apiserver, etcd)
			if shared.err == nil {
				t.Logf("kubetest: etcd and kube-apiserver %s ready in %s (shared by the package's tests)", Version, shared.c.Started.Round(100*time.Millisecond))
			}
		}
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.c
}

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    resources:
      - group: ""
        resources: ["pods", "pods/ephemeralcontainers", "pods/status"]
      - group: "apps"
      - group: "batch"
  - level: None
`

// start writes the PKI, the tokens and the audit policy to dir and starts
// etcd, then kube-apiserver, each on free loopback ports (tried again on
// others when one exits before it answers), until /readyz says ok.
func start(t testing.TB, dir, apiserver, etcd string) (*Cluster, error) {
	t.Helper()
	begin := time.Now()
	pki := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return nil, err
	}
	ca := tlstest.NewCA(t)
	c := &Cluster{
		CAFile:       filepath.Join(pki, "ca.crt"),
		CA:           ca.Pool,
		AdminToken:   token(),
		UserToken:    token(),
		AuditLog:     filepath.Join(dir, "audit.log"),
		APIServerLog: filepath.Join(dir, "kube-apiserver.log"),
		dir:          dir,
	}
	tlstest.WriteCert(t, c.CAFile, ca.Cert)
	tlstest.WritePair(t, filepath.Join(pki, "apiserver.crt"), filepath.Join(pki, "apiserver.key"), ca.ValidFor(t, "kube-apiserver", 48*time.Hour))
	sa := tlstest.NewKey(t)
	saPriv, err := x509.MarshalPKCS8PrivateKey(sa)
	if err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		"sa.key":            pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: saPriv}),
		"sa.pub":            pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub}),
		"tokens.csv":        fmt.Appendf(nil, "%s,%s,%s-uid,\"system:masters\"\n%s,%s,%s-uid\n", c.AdminToken, AdminUser, AdminUser, c.UserToken, User, User),
		"audit-policy.yaml": []byte(auditPolicy),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(pki, name), b, 0o600); err != nil {
			return nil, err
		}
	}
	c.HTTP = &http.Client{
		Timeout: time.Minute,
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12},
			MaxIdleConnsPerHost: 16,
		},
	}

	// etcd, its data in a directory of its own (it wants 0700).
	var etcdURL string
	err = retryPorts(func() error {
		client, peer := testenv.FreePort(t), testenv.FreePort(t)
		etcdURL = fmt.Sprintf("http://127.0.0.1:%d", client)
		peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
		data := filepath.Join(dir, "etcd")
		os.RemoveAll(data)
		p, err := c.run(etcd, filepath.Join(dir, "etcd.log"),
			"--name", "kubetest", "--data-dir", data,
			"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
			"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
			"--initial-cluster", "kubetest="+peerURL, "--initial-cluster-state", "new",
			"--logger", "zap", "--log-level", "warn")
		if err != nil {
			return err
		}
		return p.waitFor(30*time.Second, func() bool {
			body, code := get(http.DefaultClient, etcdURL+"/health", "")
			return code == http.StatusOK && strings.Contains(body, `"health":"true"`)
		})
	})
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("kubetest: starting etcd: %w", err)
	}

	err = retryPorts(func() error {
		port := testenv.FreePort(t)
		c.URL = fmt.Sprintf("https://127.0.0.1:%d", port)
		p, err := c.run(apiserver, c.APIServerLog,
			"--etcd-servers="+etcdURL,
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
			"--cert-dir="+pki,
			"--tls-cert-file="+filepath.Join(pki, "apiserver.crt"), "--tls-private-key-file="+filepath.Join(pki, "apiserver.key"),
			"--client-ca-file="+c.CAFile, "--token-auth-file="+filepath.Join(pki, "tokens.csv"),
			"--authorization-mode=RBAC",
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file="+filepath.Join(pki, "sa.pub"),
			"--service-account-signing-key-file="+filepath.Join(pki, "sa.key"),
			"--service-cluster-ip-range=10.96.0.0/16",
			// The "kubernetes" Service's endpoints cannot be a loopback
			// address: leave them alone rather than log that every 10 s.
			"--endpoint-reconciler-type=none",
			"--audit-policy-file="+filepath.Join(pki, "audit-policy.yaml"), "--audit-log-path="+c.AuditLog,
			"--feature-gates=ImageVolume=true")
		if err != nil {
			return err
		}
		return p.waitFor(3*time.Minute, func() bool {
			body, code := get(c.HTTP, c.URL+"/readyz", c.AdminToken)
			return code == http.StatusOK && body == "ok"
		})
	})
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("kubetest: starting kube-apiserver %s: %w", apiserver, err)
	}
	c.Started = time.Since(begin)
	return c, nil
}

// errExited is a process that exited before it answered.
var errExited = errors.New("exited before it answered")

// retryPorts runs try up to three times while it fails with errExited
// (most often a port, free when chosen, taken meanwhile).
func retryPorts(try func() error) error {
	var err error
	for range 3 {
		if err = try(); !errors.Is(err, errExited) {
			return err
		}
	}
	return err
}

// process is a server the Cluster started.
type process struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// run starts bin with args, its output appended to the file log; it is
// killed if the test binary dies first.
func (c *Cluster) run(bin, log string, args ...string) (*process, error) {
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, log: log, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	c.procs = append(c.procs, p)
	return p, nil
}

// waitFor polls ready until it holds, the process exits (errExited, with
// the tail of its log) or d passes.
func (p *process) waitFor(d time.Duration, ready func() bool) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("%s %w (%v):\n%s", filepath.Base(p.cmd.Path), errExited, p.cmd.ProcessState, tail(p.log))
		default:
		}
		if ready() {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready within %s:\n%s", filepath.Base(p.cmd.Path), d, tail(p.log))
}

// stop stops the processes, the last started first: SIGTERM, then SIGKILL
// after 10 s.
func (c *Cluster) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	}
	c.procs = nil
	if c.HTTP != nil {
		c.HTTP.CloseIdleConnections()
	}
}

// tail is the last 30 lines of a log file.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}

// get GETs u with a bearer token (if any) and returns the body and status
// (0 when it could not be asked).
func get(client *http.Client, u, token string) (string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", 0
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return string(b), resp.StatusCode
}

func token() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
