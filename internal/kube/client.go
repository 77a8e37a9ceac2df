package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/lockstep-dev/lockstep/verify/fleet"
)

// MaxPage caps a page's body: 5,000 pods of a few containers are far
// less.
const MaxPage = 64 << 20

// Client lists pods from the API server of Config over HTTP.
type Client struct {
	Config *Config
	// HTTP sends the requests; it must trust Config.TLS (the caller builds
	// it on the shared transport with that TLS configuration).
	HTTP *http.Client
}

var _ fleet.PodLister = (*Client)(nil)

// ListPods gets one page of a namespace's pods. A 404 wraps
// fleet.ErrNotFound; any other status other than 200 is an error with the
// API's message.
func (c *Client) ListPods(ctx context.Context, namespace, selector string, limit int64, continueToken string) (*corev1.PodList, error) {
	q := url.Values{}
	if selector != "" {
		q.Set("labelSelector", selector)
	}
	if limit > 0 {
		q.Set("limit", strconv.FormatInt(limit, 10))
	}
	if continueToken != "" {
		q.Set("continue", continueToken)
	}
	u := c.Config.Server + "/api/v1/namespaces/" + url.PathEscape(namespace) + "/pods"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	token := c.Config.Token
	if c.Config.TokenFile != "" {
		b, err := os.ReadFile(c.Config.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("reading the token: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxPage+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxPage {
		return nil, fmt.Errorf("GET %s: a page larger than %d bytes", u, MaxPage)
	}
	if resp.StatusCode != http.StatusOK {
		var st struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &st)
		err := fmt.Errorf("GET %s: %s: %s", u, resp.Status, st.Message)
		if resp.StatusCode == http.StatusNotFound {
			return nil, fmt.Errorf("%w: %w", fleet.ErrNotFound, err)
		}
		return nil, err
	}
	var list corev1.PodList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("GET %s: decoding the pod list: %w", u, err)
	}
	return &list, nil
}
