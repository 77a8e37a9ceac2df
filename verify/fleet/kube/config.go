package kube

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// The in-cluster service account's files.
const (
	ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// Config is where the API server is and how to authenticate to it.
type Config struct {
	// Server is the API server's base URL, e.g. https://10.0.0.1:443.
	Server string
	// Token is a bearer token; TokenFile a file holding one, read on each
	// request (a projected service-account token is rotated).
	Token     string
	TokenFile string
	// TLS holds the server's CAs and a client certificate, if any.
	TLS *tls.Config
	// Namespace is the context's (or the service account's) namespace.
	Namespace string
}

// ErrNoConfig is returned by Load when there is neither a kubeconfig nor
// an in-cluster service account.
var ErrNoConfig = errors.New("no kubeconfig and not in a cluster")

// Load finds the credentials: the kubeconfig at path if given, else the
// first of $KUBECONFIG's files, else the in-cluster service account when
// KUBERNETES_SERVICE_HOST is set, else ~/.kube/config if it exists.
// Nothing found is ErrNoConfig.
func Load(path string) (*Config, error) {
	if path != "" {
		return LoadKubeconfig(path)
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return LoadKubeconfig(filepath.SplitList(env)[0])
	}
	if host := os.Getenv("KUBERNETES_SERVICE_HOST"); host != "" {
		return InCluster(ServiceAccountDir, host, os.Getenv("KUBERNETES_SERVICE_PORT"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".kube", "config")
		if _, err := os.Stat(p); err == nil {
			return LoadKubeconfig(p)
		}
	}
	return nil, ErrNoConfig
}

// InCluster is the service account's credentials, read from dir (its
// token, ca.crt and namespace), for the API server at host:port.
func InCluster(dir, host, port string) (*Config, error) {
	if port == "" {
		port = "443"
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("reading the service account's CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s: no PEM certificate", filepath.Join(dir, "ca.crt"))
	}
	ns, _ := os.ReadFile(filepath.Join(dir, "namespace"))
	return &Config{
		Server:    "https://" + net.JoinHostPort(host, port),
		TokenFile: filepath.Join(dir, "token"),
		TLS:       &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool},
		Namespace: strings.TrimSpace(string(ns)),
	}, nil
}

// kubeconfig is the part of a kubeconfig file Load reads.
type kubeconfig struct {
	CurrentContext string `yaml:"current-context"`
	Contexts       []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster   string `yaml:"cluster"`
			User      string `yaml:"user"`
			Namespace string `yaml:"namespace"`
		} `yaml:"context"`
	} `yaml:"contexts"`
	Clusters []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server                   string `yaml:"server"`
			CertificateAuthority     string `yaml:"certificate-authority"`
			CertificateAuthorityData string `yaml:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			Token                 string `yaml:"token"`
			TokenFile             string `yaml:"tokenFile"`
			ClientCertificate     string `yaml:"client-certificate"`
			ClientCertificateData string `yaml:"client-certificate-data"`
			ClientKey             string `yaml:"client-key"`
			ClientKeyData         string `yaml:"client-key-data"`
			Exec                  any    `yaml:"exec"`
			AuthProvider          any    `yaml:"auth-provider"`
		} `yaml:"user"`
	} `yaml:"users"`
}

// LoadKubeconfig reads the current context of a kubeconfig: its cluster's
// server and CA, and its user's token or client certificate. Relative
// file paths are relative to the kubeconfig. An exec or auth-provider user
// is not supported (an error says so): give a token or a certificate.
func LoadKubeconfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(b, &kc); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	ctxName := kc.CurrentContext
	if ctxName == "" && len(kc.Contexts) == 1 {
		ctxName = kc.Contexts[0].Name
	}
	cfg := &Config{TLS: &tls.Config{MinVersion: tls.VersionTLS12}}
	var clusterName, userName string
	found := false
	for _, c := range kc.Contexts {
		if c.Name == ctxName {
			clusterName, userName, cfg.Namespace, found = c.Context.Cluster, c.Context.User, c.Context.Namespace, true
		}
	}
	if !found {
		return nil, fmt.Errorf("kubeconfig %s: no context %q", path, ctxName)
	}
	found = false
	for _, c := range kc.Clusters {
		if c.Name != clusterName {
			continue
		}
		found = true
		cfg.Server = strings.TrimRight(c.Cluster.Server, "/")
		cfg.TLS.InsecureSkipVerify = c.Cluster.InsecureSkipTLSVerify
		ca, err := dataOrFile(c.Cluster.CertificateAuthorityData, rel(c.Cluster.CertificateAuthority))
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: cluster %s's CA: %w", path, clusterName, err)
		}
		if ca != nil {
			cfg.TLS.RootCAs = x509.NewCertPool()
			if !cfg.TLS.RootCAs.AppendCertsFromPEM(ca) {
				return nil, fmt.Errorf("kubeconfig %s: cluster %s's CA: no PEM certificate", path, clusterName)
			}
		}
	}
	if !found || cfg.Server == "" {
		return nil, fmt.Errorf("kubeconfig %s: no server for cluster %q", path, clusterName)
	}
	for _, u := range kc.Users {
		if u.Name != userName {
			continue
		}
		if u.User.Exec != nil || u.User.AuthProvider != nil {
			return nil, fmt.Errorf("kubeconfig %s: user %s authenticates with exec or an auth-provider, which lockstep does not run: give it a token or a client certificate", path, userName)
		}
		cfg.Token, cfg.TokenFile = u.User.Token, rel(u.User.TokenFile)
		cert, err := dataOrFile(u.User.ClientCertificateData, rel(u.User.ClientCertificate))
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: user %s's certificate: %w", path, userName, err)
		}
		key, err := dataOrFile(u.User.ClientKeyData, rel(u.User.ClientKey))
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: user %s's key: %w", path, userName, err)
		}
		if cert != nil {
			pair, err := tls.X509KeyPair(cert, key)
			if err != nil {
				return nil, fmt.Errorf("kubeconfig %s: user %s's certificate: %w", path, userName, err)
			}
			cfg.TLS.Certificates = []tls.Certificate{pair}
		}
	}
	return cfg, nil
}

// dataOrFile is base64 data if given, else a file's content, else nil.
func dataOrFile(data, path string) ([]byte, error) {
	if data != "" {
		return base64.StdEncoding.DecodeString(data)
	}
	if path != "" {
		return os.ReadFile(path)
	}
	return nil, nil
}
