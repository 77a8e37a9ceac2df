package cdn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

// TestCircuitOpenIsUnreachable: an asset the check never asked for because
// its host's breaker was open is unreachable, never ok, even when the host
// would have served it with the right bytes.
func TestCircuitOpenIsUnreachable(t *testing.T) {
	const n = 10
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("%02d.js", i)] = body
	}
	var mu sync.Mutex
	asked := map[string]bool{}
	fails := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked[strings.TrimPrefix(r.URL.Path, "/")] = true
		fails++
		fail := fails <= 2
		mu.Unlock()
		if fail { // opens the breaker; every later answer is right
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(body))
	}))
	defer srv.Close()
	p := transport.DefaultPolicy()
	p.MaxAttempts = 1
	p.BreakerFailures = 2
	p.BreakerCooldown = time.Hour
	p.MaxDelay = time.Hour
	client := transport.New(p)
	rep, err := Check(context.Background(), assets(files, srv.URL), Options{Client: client, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if client.Stats().CircuitOpen == 0 {
		t.Fatalf("the breaker never refused a request: %+v", client.Stats())
	}
	refused := 0
	for _, res := range rep.Results {
		if asked[res.Path] {
			continue
		}
		refused++
		var coe *transport.CircuitOpenError
		if res.Status != StatusUnreachable || !errors.As(res.Err, &coe) {
			t.Errorf("%s, never asked (circuit open): %s %q (err %v), want unreachable with a *CircuitOpenError", res.Path, res.Status, res.Reason, res.Err)
		}
	}
	if refused == 0 {
		t.Fatalf("every asset was asked for: %+v", rep.Summary)
	}
	if rep.Err() == nil || rep.Summary.OK != 0 {
		t.Errorf("summary %+v, err %v: want no asset ok and the check failed", rep.Summary, rep.Err())
	}
}
