package browsertest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"
)

// proxy is the HTTP proxy of a browser context: CONNECT (HTTPS) and plain
// HTTP to a mapped host:port go to its loopback address; anything else is
// refused with 403, which the browser reports as a failed request.
type proxy struct {
	hosts map[string]string
	ln    net.Listener
	srv   *http.Server
	wg    sync.WaitGroup
}

func startProxy(hosts map[string]string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the browser's proxy: %w", err)
	}
	p := &proxy{hosts: hosts, ln: ln}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	p.wg.Go(func() { p.srv.Serve(ln) })
	return p, nil
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) close() {
	p.srv.Close()
	p.wg.Wait()
}

// target returns the loopback address host (host:port, or a host of
// scheme's default port) is mapped to.
func (p *proxy) target(host, scheme string) (string, bool) {
	if _, _, err := net.SplitHostPort(host); err != nil {
		port := "80"
		if scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(host, port)
	}
	addr, ok := p.hosts[host]
	return addr, ok
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		addr, ok := p.target(r.Host, "https")
		if !ok {
			http.Error(w, "browsertest: "+r.Host+" is not mapped", http.StatusForbidden)
			return
		}
		upstream, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			upstream.Close()
			http.Error(w, "no hijacking", http.StatusInternalServerError)
			return
		}
		conn, buf, err := hj.Hijack()
		if err != nil {
			upstream.Close()
			return
		}
		conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
		var wg sync.WaitGroup
		wg.Go(func() {
			if buf.Reader.Buffered() > 0 {
				io.CopyN(upstream, buf, int64(buf.Reader.Buffered()))
			}
			io.Copy(upstream, conn)
			upstream.(*net.TCPConn).CloseWrite()
		})
		io.Copy(conn, upstream)
		conn.Close()
		wg.Wait()
		upstream.Close()
		return
	}
	addr, ok := p.target(r.URL.Host, r.URL.Scheme)
	if !ok || r.URL.Scheme != "http" {
		http.Error(w, "browsertest: "+r.URL.Host+" is not mapped", http.StatusForbidden)
		return
	}
	(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.Out.URL.Host = addr
		pr.Out.Host = pr.In.Host
	}}).ServeHTTP(w, r)
}
