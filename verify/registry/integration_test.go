package registry

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
)

// TestDistribution pins against Debian's docker-registry (distribution):
// push, pin, re-push, pin again, on a real registry's protocol.
func TestDistribution(t *testing.T) {
	host := testenv.Registry(t)
	ctx := context.Background()
	img := pushImage(t, host+"/shop/web:v1", "linux", "amd64")
	idx, imgs := pushIndex(t, host+"/shop/multi:v1", true)

	reqs := []Request{{Name: "web", Ref: host + "/shop/web:v1"}, {Name: "multi", Ref: host + "/shop/multi:v1"}}
	first, err := PinAll(ctx, reqs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if first[0].Digest != digestOf(t, img) || first[0].Platforms[0].Config != configOf(t, img) {
		t.Errorf("web = %+v, want %s config %s", first[0], digestOf(t, img), configOf(t, img))
	}
	if first[1].Digest != digestOf(t, idx) || len(first[1].Platforms) != 2 || first[1].Platforms[1].Config != configOf(t, imgs[1]) {
		t.Errorf("multi = %+v, want index %s with two platforms (attestation skipped)", first[1], digestOf(t, idx))
	}

	// By digest, with and without the tag.
	for _, ref := range []string{host + "/shop/web@" + first[0].Digest.String(), host + "/shop/web:v1@" + first[0].Digest.String()} {
		if im, err := Pin(ctx, "web", ref, Options{}); err != nil || im.Digest != first[0].Digest {
			t.Errorf("Pin(%s) = %v, %v", ref, im, err)
		}
	}

	// Re-push web:v1: the moved tag is refused, then accepted on purpose.
	moved := digestOf(t, pushImage(t, host+"/shop/web:v1", "linux", "amd64"))
	prev := &manifest.Manifest{Images: first}
	second, err := PinAll(ctx, reqs, Options{Previous: prev})
	var me *MovedTagError
	if !errors.As(err, &me) || len(me.Tags) != 1 || me.Tags[0].Name != "web" || me.Tags[0].Current != moved {
		t.Fatalf("pin after the re-push = %v, want web moved to %s", err, moved)
	}
	if second[1].Digest != first[1].Digest {
		t.Errorf("multi changed: %s -> %s", first[1].Digest, second[1].Digest)
	}
	if _, err := PinAll(ctx, reqs, Options{Previous: prev, AllowMoved: []string{"web"}}); err != nil {
		t.Errorf("--allow-moved-tag web: %v", err)
	}
	if _, err := Pin(ctx, "web", host+"/shop/web:v1@"+first[0].Digest.String(), Options{}); !errors.As(err, &me) {
		t.Errorf("tag@old digest after the re-push = %v, want a moved tag", err)
	}

	// What is not there.
	for _, ref := range []string{host + "/shop/web:v9", host + "/shop/none:v1", fmt.Sprintf("%s/shop/web@sha256:%064d", host, 0)} {
		if _, err := Pin(ctx, "web", ref, Options{}); !errors.Is(err, ErrImageNotFound) {
			t.Errorf("Pin(%s) = %v, want ErrImageNotFound", ref, err)
		}
	}
	opt := Options{Platform: "linux/s390x"}
	var pe *PlatformError
	if _, err := Pin(ctx, "multi", host+"/shop/multi:v1", opt); !errors.As(err, &pe) {
		t.Errorf("--platform linux/s390x = %v, want a *PlatformError", err)
	}
}
