package servers

import (
	"net"
	"net/http"
	"time"
)

// Server is an HTTP server on a loopback port.
type Server struct {
	// URL is http://127.0.0.1:PORT; Addr is 127.0.0.1:PORT.
	URL, Addr string
	srv       *http.Server
}

// Serve serves h on a new loopback port until Close.
func Serve(h http.Handler) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: l.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	s.URL = "http://" + s.Addr
	go s.srv.Serve(l)
	return s, nil
}

// Close stops the server and closes its connections.
func (s *Server) Close() error { return s.srv.Close() }
