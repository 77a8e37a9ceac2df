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

var (
	_ fleet.PodLister  = (*Client)(nil)
	_ fleet.NodeGetter = (*Client)(nil)
)

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
	var list corev1.PodList
	if err := c.get(ctx, u, "the pod list", &list); err != nil {
		return nil, err
	}
	return &list, nil
}

// GetNode gets one node (for its platform, status.nodeInfo). A 404 wraps
// fleet.ErrNotFound, a 403 fleet.ErrForbidden (RBAC may grant pods only).
func (c *Client) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	var n corev1.Node
	if err := c.get(ctx, c.Config.Server+"/api/v1/nodes/"+url.PathEscape(name), "the node", &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// get GETs u, with the token, and decodes its JSON body (what, for
// messages) into v.
func (c *Client) get(ctx context.Context, u, what string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	token := c.Config.Token
	if c.Config.TokenFile != "" {
		b, err := os.ReadFile(c.Config.TokenFile)
		if err != nil {
			return fmt.Errorf("reading the token: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxPage+1))
	if err != nil {
		return err
	}
	if len(body) > MaxPage {
		return fmt.Errorf("GET %s: a page larger than %d bytes", u, MaxPage)
	}
	if resp.StatusCode != http.StatusOK {
		var st struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &st)
		err := fmt.Errorf("GET %s: %s: %s", u, resp.Status, st.Message)
		switch resp.StatusCode {
		case http.StatusNotFound:
			return fmt.Errorf("%w: %w", fleet.ErrNotFound, err)
		case http.StatusForbidden:
			return fmt.Errorf("%w: %w", fleet.ErrForbidden, err)
		}
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: decoding %s: %w", u, what, err)
	}
	return nil
}
