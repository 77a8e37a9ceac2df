package servers

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// maxBody caps a blob or a manifest the registry accepts.
const maxBody = 64 << 20

// Registry is an in-memory OCI distribution registry: enough of the
// distribution API to push and pull images and indexes (blob uploads,
// monolithic or in chunks, cross-repository mounts; manifests by tag or
// digest; tag lists). It keeps everything in memory and checks every
// digest it is given.
type Registry struct {
	// Host is its host:port on 127.0.0.1; references under it use plain
	// HTTP, as go-containerregistry does for loopback registries.
	Host string

	srv      *Server
	requests atomic.Int64

	mu        sync.Mutex
	blobs     map[string][]byte           // by digest
	manifests map[string]map[string]entry // by repository, then tag or digest
	uploads   map[string][]byte           // by upload ID
}

type entry struct {
	mediaType string
	body      []byte
	digest    string
}

// StartRegistry starts a registry; Close stops it.
func StartRegistry() (*Registry, error) {
	r := &Registry{blobs: map[string][]byte{}, manifests: map[string]map[string]entry{}, uploads: map[string][]byte{}}
	srv, err := Serve(r)
	if err != nil {
		return nil, err
	}
	r.srv, r.Host = srv, srv.Addr
	return r, nil
}

// Close stops the registry.
func (r *Registry) Close() error { return r.srv.Close() }

// Requests counts the requests the registry has served.
func (r *Registry) Requests() int64 { return r.requests.Load() }

// Ref returns host/repo:tag (repoTag is "repo:tag").
func (r *Registry) Ref(repoTag string) string { return r.Host + "/" + repoTag }

func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.requests.Add(1)
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	p, ok := strings.CutPrefix(req.URL.Path, "/v2/")
	if !ok {
		regError(w, http.StatusNotFound, "NAME_UNKNOWN", "not a distribution API path")
		return
	}
	if p == "" {
		return // the API version check: 200
	}
	for _, route := range []struct {
		sep   string
		serve func(w http.ResponseWriter, req *http.Request, repo, rest string)
	}{
		{"/blobs/uploads/", r.upload},
		{"/blobs/", r.blob},
		{"/manifests/", r.manifest},
		{"/tags/", r.tags},
	} {
		if i := strings.LastIndex(p, route.sep); i > 0 {
			route.serve(w, req, p[:i], p[i+len(route.sep):])
			return
		}
	}
	if strings.HasSuffix(p, "/blobs/uploads") {
		r.upload(w, req, strings.TrimSuffix(p, "/blobs/uploads"), "")
		return
	}
	regError(w, http.StatusNotFound, "NAME_UNKNOWN", "unknown path")
}

func (r *Registry) blob(w http.ResponseWriter, req *http.Request, _, digest string) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		regError(w, http.StatusMethodNotAllowed, "UNSUPPORTED", req.Method)
		return
	}
	r.mu.Lock()
	b, ok := r.blobs[digest]
	r.mu.Unlock()
	if !ok {
		regError(w, http.StatusNotFound, "BLOB_UNKNOWN", "blob unknown to registry")
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Docker-Content-Digest", digest)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if req.Method == http.MethodGet {
		w.Write(b)
	}
}

// upload serves POST .../blobs/uploads/ (start, monolithic with ?digest=,
// or a mount with ?mount=&from=), PATCH .../blobs/uploads/ID (a chunk)
// and PUT .../blobs/uploads/ID?digest= (the last chunk and the commit).
func (r *Registry) upload(w http.ResponseWriter, req *http.Request, repo, id string) {
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		regError(w, http.StatusBadRequest, "BLOB_UPLOAD_INVALID", "unreadable or too large body")
		return
	}
	q := req.URL.Query()
	switch {
	case req.Method == http.MethodPost && id == "":
		if mount := q.Get("mount"); mount != "" {
			r.mu.Lock()
			_, ok := r.blobs[mount]
			r.mu.Unlock()
			if ok {
				w.Header().Set("Location", "/v2/"+repo+"/blobs/"+mount)
				w.Header().Set("Docker-Content-Digest", mount)
				w.WriteHeader(http.StatusCreated)
				return
			}
		}
		if d := q.Get("digest"); d != "" {
			r.commit(w, repo, d, body)
			return
		}
		id := newID()
		r.mu.Lock()
		r.uploads[id] = body
		r.mu.Unlock()
		r.accepted(w, repo, id, len(body))
	case req.Method == http.MethodPatch && id != "":
		r.mu.Lock()
		b, ok := r.uploads[id]
		if ok {
			b = append(b, body...)
			r.uploads[id] = b
		}
		r.mu.Unlock()
		if !ok {
			regError(w, http.StatusNotFound, "BLOB_UPLOAD_UNKNOWN", "upload unknown")
			return
		}
		r.accepted(w, repo, id, len(b))
	case req.Method == http.MethodPut && id != "":
		r.mu.Lock()
		b, ok := r.uploads[id]
		delete(r.uploads, id)
		r.mu.Unlock()
		if !ok {
			regError(w, http.StatusNotFound, "BLOB_UPLOAD_UNKNOWN", "upload unknown")
			return
		}
		r.commit(w, repo, q.Get("digest"), append(b, body...))
	default:
		regError(w, http.StatusMethodNotAllowed, "UNSUPPORTED", req.Method)
	}
}

func (r *Registry) accepted(w http.ResponseWriter, repo, id string, n int) {
	w.Header().Set("Location", "/v2/"+repo+"/blobs/uploads/"+id)
	w.Header().Set("Docker-Upload-UUID", id)
	w.Header().Set("Range", fmt.Sprintf("0-%d", max(n-1, 0)))
	w.WriteHeader(http.StatusAccepted)
}

// commit stores b as the blob digest, which must be its sha256.
func (r *Registry) commit(w http.ResponseWriter, repo, digest string, b []byte) {
	if digest != sha256Digest(b) {
		regError(w, http.StatusBadRequest, "DIGEST_INVALID", "provided digest did not match uploaded content")
		return
	}
	r.mu.Lock()
	r.blobs[digest] = b
	r.mu.Unlock()
	w.Header().Set("Location", "/v2/"+repo+"/blobs/"+digest)
	w.Header().Set("Docker-Content-Digest", digest)
	w.WriteHeader(http.StatusCreated)
}

func (r *Registry) manifest(w http.ResponseWriter, req *http.Request, repo, ref string) {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		r.mu.Lock()
		e, ok := r.manifests[repo][ref]
		r.mu.Unlock()
		if !ok {
			regError(w, http.StatusNotFound, "MANIFEST_UNKNOWN", "manifest unknown")
			return
		}
		w.Header().Set("Content-Type", e.mediaType)
		w.Header().Set("Docker-Content-Digest", e.digest)
		w.Header().Set("Content-Length", strconv.Itoa(len(e.body)))
		if req.Method == http.MethodGet {
			w.Write(e.body)
		}
	case http.MethodPut:
		body, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
		if err != nil || len(body) > maxBody {
			regError(w, http.StatusBadRequest, "MANIFEST_INVALID", "unreadable or too large manifest")
			return
		}
		d := sha256Digest(body)
		if strings.HasPrefix(ref, "sha256:") && ref != d {
			regError(w, http.StatusBadRequest, "DIGEST_INVALID", "the manifest's digest is not its reference")
			return
		}
		e := entry{mediaType: req.Header.Get("Content-Type"), body: body, digest: d}
		r.mu.Lock()
		if r.manifests[repo] == nil {
			r.manifests[repo] = map[string]entry{}
		}
		r.manifests[repo][d] = e
		r.manifests[repo][ref] = e
		r.mu.Unlock()
		w.Header().Set("Location", "/v2/"+repo+"/manifests/"+d)
		w.Header().Set("Docker-Content-Digest", d)
		w.WriteHeader(http.StatusCreated)
	default:
		regError(w, http.StatusMethodNotAllowed, "UNSUPPORTED", req.Method)
	}
}

func (r *Registry) tags(w http.ResponseWriter, req *http.Request, repo, rest string) {
	if rest != "list" || req.Method != http.MethodGet {
		regError(w, http.StatusNotFound, "NAME_UNKNOWN", "unknown path")
		return
	}
	r.mu.Lock()
	tags := []string{}
	for ref := range r.manifests[repo] {
		if !strings.HasPrefix(ref, "sha256:") {
			tags = append(tags, ref)
		}
	}
	r.mu.Unlock()
	slices.Sort(tags)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"name": repo, "tags": tags})
}

func regError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": code, "message": msg}}})
}

func sha256Digest(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
