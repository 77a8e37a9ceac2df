package running

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/verdict"
)

// ECS reads a container's image from the ECS task metadata endpoint v4
// (ECS_CONTAINER_METADATA_URI_V4): ${URI}/task lists the task's
// containers, each with Name, Image (the reference) and ImageID.
type ECS struct {
	// URI is ECS_CONTAINER_METADATA_URI_V4.
	URI string
	// Container is the container's name in the task definition. Empty
	// means Default if the task has such a container, else the task's
	// only container, else the container lockstep runs in (${URI}).
	Container string
	Default   string
	Client    *transport.Client
}

var _ Source = (*ECS)(nil)

type ecsContainer struct {
	DockerID    string `json:"DockerId"`
	Name        string `json:"Name"`
	Image       string `json:"Image"`
	ImageID     string `json:"ImageID"`
	KnownStatus string `json:"KnownStatus"`
}

// Observe asks the endpoint. An unreachable endpoint or an error status
// is an *verdict.UnavailableError; a container not in the task wraps
// ErrNoContainer.
func (e *ECS) Observe(ctx context.Context) (*Observation, error) {
	var task struct {
		TaskARN    string         `json:"TaskARN"`
		Containers []ecsContainer `json:"Containers"`
	}
	if err := e.get(ctx, joinURL(e.URI, "task"), &task); err != nil {
		return nil, err
	}
	c, err := e.pick(ctx, task.Containers)
	if err != nil {
		return nil, err
	}
	o := &Observation{Source: "ecs:" + c.Name, Container: c.Name, Reference: c.Image}
	o.addImageID(c.ImageID)
	if c.ImageID == "" {
		// The agent reports no image ID before the image is pulled: what
		// runs is then known only by its tag.
		o.Unpinned = append(o.Unpinned, c.Image)
	}
	if c.KnownStatus != "" && !strings.EqualFold(c.KnownStatus, "RUNNING") {
		return nil, fmt.Errorf("ecs container %s is not running (status %s)", c.Name, c.KnownStatus)
	}
	return o, nil
}

func (e *ECS) pick(ctx context.Context, cs []ecsContainer) (*ecsContainer, error) {
	want := e.Container
	if want == "" {
		want = e.Default
	}
	var names []string
	for i := range cs {
		if want != "" && cs[i].Name == want {
			return &cs[i], nil
		}
		names = append(names, cs[i].Name)
	}
	if e.Container != "" {
		return nil, fmt.Errorf("ecs task has no container %q (it has %s): %w", e.Container, strings.Join(names, ", "), ErrNoContainer)
	}
	if len(cs) == 1 {
		return &cs[0], nil
	}
	var self ecsContainer
	if err := e.get(ctx, e.URI, &self); err != nil {
		return nil, err
	}
	if self.Name == "" {
		return nil, fmt.Errorf("ecs task has %d containers (%s); name one as ecs:NAME: %w", len(cs), strings.Join(names, ", "), ErrAmbiguous)
	}
	return &self, nil
}

func (e *ECS) get(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("ecs metadata %q: %w", u, err)
	}
	resp, err := e.Client.HTTPClient().Do(req)
	if err != nil {
		return verdict.Unavailable("ecs metadata", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return verdict.Unavailable("ecs metadata", err)
	}
	if resp.StatusCode != http.StatusOK {
		return verdict.Unavailable("ecs metadata", fmt.Errorf("GET %s: %s", u, resp.Status))
	}
	if len(body) > maxBody {
		return verdict.Unavailable("ecs metadata", errors.New("answer too large"))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return verdict.Unavailable("ecs metadata", fmt.Errorf("GET %s: decoding: %w", u, err))
	}
	return nil
}
