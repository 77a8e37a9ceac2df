package remote_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/remote"
	"github.com/lockstep-dev/lockstep/verdict"
)

func doc(t *testing.T) []byte {
	t.Helper()
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion, Kind: manifest.Kind,
		Release: manifest.Release{Name: "web", Generation: 1, CreatedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		Assets: manifest.Assets{CDN: []string{"https://cdn.example.com/"},
			Files: []manifest.File{{Path: "a.js", Size: 1, SHA256: strings.Repeat("a", 64)}}},
	}
	m.Assets.Fingerprint = manifest.Fingerprint(m.Assets.Files)
	raw, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestFetch(t *testing.T) {
	raw := doc(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/m.json", func(w http.ResponseWriter, r *http.Request) { w.Write(raw) })
	mux.HandleFunc("/m.json.sig", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("MEUCIQ==")) })
	mux.HandleFunc("/unsigned.json", func(w http.ResponseWriter, r *http.Request) { w.Write(raw) })
	mux.HandleFunc("/bad.json", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"apiVersion":"x"}`)) })
	mux.HandleFunc("/huge.json", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat(" ", manifest.MaxSize+1)))
	})
	mux.HandleFunc("/error.json", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusForbidden) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := transport.New(transport.Policy{MaxAttempts: 1})
	fetch := func(path string) (*manifest.Signed, error) {
		s, err := remote.New(srv.URL+path, client)
		if err != nil {
			t.Fatal(err)
		}
		return s.Fetch(context.Background())
	}
	s, err := fetch("/m.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Raw) != string(raw) || string(s.Signature) != "MEUCIQ==" || s.Location != srv.URL+"/m.json" {
		t.Errorf("Fetch = %q sig %q at %q", s.Raw, s.Signature, s.Location)
	}
	if s, err := fetch("/unsigned.json"); err != nil || s.Signature != nil {
		t.Errorf("Fetch(unsigned) = %v, %v; want no signature", s, err)
	}
	var ve *manifest.ValidationError
	for _, p := range []string{"/bad.json", "/huge.json"} {
		if _, err := fetch(p); !errors.As(err, &ve) {
			t.Errorf("Fetch(%s) = %v, want a ValidationError", p, err)
		}
	}
	for _, p := range []string{"/error.json", "/missing.json"} {
		if _, err := fetch(p); !verdict.IsUnavailable(err) {
			t.Errorf("Fetch(%s) = %v, want an UnavailableError", p, err)
		}
	}
	dead, _ := remote.New("http://127.0.0.1:1/m.json", client)
	if _, err := dead.Fetch(context.Background()); !verdict.IsUnavailable(err) {
		t.Errorf("Fetch(closed port) = %v, want an UnavailableError", err)
	}
}

func TestNew(t *testing.T) {
	for _, tt := range []struct {
		url string
		ok  bool
	}{
		{"https://releases.example.com/web/production.json", true},
		{"http://127.0.0.1:8080/m.json", true},
		{"http://[::1]:8080/m.json", true},
		{"http://localhost/m.json", true},
		{"http://releases.example.com/m.json", false},
		{"https://user:pw@releases.example.com/m.json", false},
		{"ftp://releases.example.com/m.json", false},
		{"/etc/m.json", false},
	} {
		if _, err := remote.New(tt.url, nil); (err == nil) != tt.ok {
			t.Errorf("New(%q) error = %v, want ok=%v", tt.url, err, tt.ok)
		}
	}
}
