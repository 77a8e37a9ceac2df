package webhook

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lockstep-dev/lockstep/admission"
)

// The decisions counted in lockstep_webhook_requests_total.
const (
	decisionAllowed = "allowed"
	decisionDenied  = "denied"
	decisionWarned  = "warned"
	// decisionError: the request could not be judged (no manifest, an
	// object that does not decode, a malformed review) and was refused.
	decisionError = "error"
)

// Metrics are the webhook's Prometheus metrics, on their own registry. A
// nil *Metrics records nothing.
type Metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	latency      prometheus.Histogram
	findings     *prometheus.CounterVec
	refreshes    *prometheus.CounterVec
	generation   *prometheus.GaugeVec
	loadedAt     *prometheus.GaugeVec
	unsigned     *prometheus.GaugeVec
	certReloads  *prometheus.CounterVec
	certNotAfter prometheus.Gauge
}

// NewMetrics returns the webhook's metrics on a new registry, with the Go
// and process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lockstep_webhook_requests_total",
			Help: "Admission reviews answered, by decision: allowed, denied, warned (admitted in warn mode with findings) or error (not judged, refused).",
		}, []string{"decision"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "lockstep_webhook_request_duration_seconds",
			Help:    "Time to answer an admission review, from reading the body to writing the response.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}),
		findings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lockstep_webhook_findings_total",
			Help: "Findings against admitted objects' images, by kind and mode.",
		}, []string{"kind", "mode"}),
		refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lockstep_webhook_manifest_refreshes_total",
			Help: "Manifest refreshes, by result: loaded, unchanged, or the reason a manifest was refused (fetch, invalid, signature, expired, rollback, release).",
		}, []string{"result"}),
		generation: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lockstep_webhook_manifest_generation",
			Help: "Generation of the manifest reviews are judged against, by release; absent before one is loaded.",
		}, []string{"release"}),
		loadedAt: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lockstep_webhook_manifest_loaded_timestamp_seconds",
			Help: "When the current manifest was last fetched and found good (loaded or unchanged), Unix time, by release.",
		}, []string{"release"}),
		unsigned: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lockstep_webhook_manifest_unsigned",
			Help: "1 when the current manifest was accepted without a signature check (--insecure-allow-unsigned), by release.",
		}, []string{"release"}),
		certReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lockstep_webhook_tls_reloads_total",
			Help: "TLS certificate reloads after the files changed, by result: ok or error (the old pair kept).",
		}, []string{"result"}),
		certNotAfter: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lockstep_webhook_tls_not_after_timestamp_seconds",
			Help: "Expiry of the serving certificate, Unix time.",
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.findings, m.refreshes, m.generation, m.loadedAt, m.unsigned,
		m.certReloads, m.certNotAfter,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, d := range []string{decisionAllowed, decisionDenied, decisionWarned, decisionError} {
		m.requests.WithLabelValues(d)
	}
	return m
}

// Registry returns the registry the metrics are on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func (m *Metrics) request(decision string, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(decision).Inc()
	m.latency.Observe(d.Seconds())
}

func (m *Metrics) finding(k admission.Kind, mode Mode) {
	if m != nil {
		m.findings.WithLabelValues(string(k), string(mode)).Inc()
	}
}

func (m *Metrics) refresh(result string, a *Accepted) {
	if m == nil {
		return
	}
	m.refreshes.WithLabelValues(result).Inc()
	if a != nil && (result == refreshLoaded || result == refreshUnchanged) {
		release := a.Signed.Manifest.Release.Name
		m.generation.WithLabelValues(release).Set(float64(a.Signed.Manifest.Release.Generation))
		m.loadedAt.WithLabelValues(release).Set(float64(a.At.Unix()))
		if a.Unsigned {
			m.unsigned.WithLabelValues(release).Set(1)
		} else {
			m.unsigned.WithLabelValues(release).Set(0)
		}
	}
}

func (m *Metrics) certReload(ok bool) {
	if m == nil {
		return
	}
	result := "ok"
	if !ok {
		result = "error"
	}
	m.certReloads.WithLabelValues(result).Inc()
}

func (m *Metrics) certLoaded(notAfter time.Time) {
	if m != nil {
		m.certNotAfter.Set(float64(notAfter.Unix()))
	}
}
