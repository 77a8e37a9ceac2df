package cdn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestStreamJSON: the JSON written a result at a time is Write's, byte for
// byte, with any number of results.
func TestStreamJSON(t *testing.T) {
	for _, n := range []int{7, 1, 0} {
		r := goldenReport()
		r.Results = r.Results[:n]
		var want, got bytes.Buffer
		if err := r.Write(&want, "json", ""); err != nil {
			t.Fatal(err)
		}
		s := newJSONStream(&got)
		s.begin(&Report{Bases: r.Bases, Files: r.Files, Origin: r.Origin})
		for i := range r.Results {
			s.result(&r.Results[i])
		}
		if err := s.end(r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%d results: streamed\n%s\nwant Write's\n%s", n, got.String(), want.String())
		}
	}
}

// TestEmitInOrder: results decided in any order are emitted in index
// order, each as soon as the ones before it are in (an index emitted
// early would be read in another step's place).
func TestEmitInOrder(t *testing.T) {
	decided, emitted := make(chan int), make(chan int, 6)
	go func() {
		emitInOrder(decided, 6, func(i int) { emitted <- i })
		close(emitted)
	}()
	for _, step := range []struct {
		decided int
		want    []int
	}{{2, nil}, {0, []int{0}}, {1, []int{1, 2}}, {4, nil}, {3, []int{3, 4}}, {5, []int{5}}} {
		decided <- step.decided
		for _, w := range step.want {
			if got := <-emitted; got != w {
				t.Fatalf("after %d was decided: emitted %d, want %d", step.decided, got, w)
			}
		}
	}
	close(decided)
	if i, ok := <-emitted; ok {
		t.Errorf("emitted %d after the last", i)
	}
}

// TestCheckStreams: a check with Stream writes what Write writes of its
// report, through retries, waits and failures that decide the results
// out of order.
func TestCheckStreams(t *testing.T) {
	t.Parallel() // its own fault CDN
	_, a := faultCDN(t)
	for _, full := range []bool{false, true} {
		var got, want bytes.Buffer
		rep, err := Check(context.Background(), a, Options{Client: fastClient(), Full: full, Concurrency: 8, Stream: &got})
		if err != nil {
			t.Fatal(err)
		}
		if err := rep.Write(&want, "json", ""); err != nil {
			t.Fatal(err)
		}
		if len(rep.Results) != len(a.Files) || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("full=%v: streamed\n%s\nwant Write's\n%s", full, got.String(), want.String())
		}
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

var errWrite = errors.New("disk full")

// TestCheckStreamError: a stream that cannot be written is Check's error,
// with the complete report.
func TestCheckStreamError(t *testing.T) {
	t.Parallel() // its own fault CDN
	_, a := faultCDN(t)
	rep, err := Check(context.Background(), a, Options{Client: fastClient(), Stream: failingWriter{}})
	if !errors.Is(err, errWrite) || rep == nil || len(rep.Results) != len(a.Files) {
		t.Errorf("Check with a failing stream: %v, report %v; want the write error and the report", err, rep != nil)
	}
}

// stalled is a reader of the stream that takes nothing until released.
type stalled struct{ release chan struct{} }

func (s stalled) Write(p []byte) (int, error) {
	<-s.release
	return len(p), nil
}

// TestStalledStreamReader: a reader of the stream that takes nothing holds
// no request back, and the report's duration leaves its wait out.
func TestStalledStreamReader(t *testing.T) {
	files := map[string]string{}
	for i := range 500 { // a report of more than the stream's 64 KiB buffer
		files[fmt.Sprintf("assets/with-a-longer-name-%03d.js", i)] = body
	}
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(body))
	}))
	defer srv.Close()
	w := stalled{make(chan struct{})}
	done := make(chan *Report)
	start := time.Now()
	go func() {
		rep, err := Check(context.Background(), assets(files, srv.URL), Options{Client: fastClient(), Concurrency: 8, Stream: w})
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	for asked.Load() < 500 {
		if time.Since(start) > 10*time.Second {
			close(w.release)
			t.Fatalf("%d of 500 assets asked for while the reader was stalled", asked.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	const stall = time.Second
	time.Sleep(stall)
	close(w.release)
	rep := <-done
	if rep == nil || rep.Summary.OK != 500 || rep.Summary.Duration > time.Since(start)-stall/2 {
		t.Errorf("report %+v after %v (reader stalled %v): want 500 ok and a duration without the stall", rep.Summary, time.Since(start), stall)
	}
}
