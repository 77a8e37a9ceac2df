package webhook

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
)

// TestMinimalTypesMatchKubernetes walks k8s.io/api's PodSpec for every
// field that names an image (a string field Image, an ImageVolumeSource)
// and checks that the webhook's own podSpec decodes exactly those, under
// the same JSON names. A Kubernetes release that adds a place for an image
// fails this test when k8s.io/api is updated, before the webhook can miss it.
func TestMinimalTypesMatchKubernetes(t *testing.T) {
	volumeSource := reflect.TypeFor[corev1.ImageVolumeSource]()
	var theirs []string
	seen := map[reflect.Type]bool{}
	var walk func(path string, t reflect.Type)
	walk = func(path string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			if typ.Kind() == reflect.Slice {
				path += "[]"
			}
			typ = typ.Elem()
		}
		if typ == volumeSource {
			theirs = append(theirs, path+".reference")
			return
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		defer delete(seen, typ)
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			p := path + "." + name
			if f.Anonymous && name == "" {
				p = path // inline
			}
			if f.Name == "Image" && f.Type.Kind() == reflect.String {
				theirs = append(theirs, p)
				continue
			}
			walk(p, f.Type)
		}
	}
	walk("spec", reflect.TypeFor[corev1.PodSpec]())
	slices.Sort(theirs)
	ours := []string{
		"spec.containers[].image",
		"spec.ephemeralContainers[].image",
		"spec.initContainers[].image",
		"spec.volumes[].image.reference",
	}
	if !slices.Equal(theirs, ours) {
		t.Errorf("k8s.io/api's PodSpec names images at\n  %s\nthe webhook decodes\n  %s", strings.Join(theirs, "\n  "), strings.Join(ours, "\n  "))
	}
	// The same names, field by field.
	for _, c := range []struct {
		ours, theirs reflect.Type
		fields       []string
	}{
		{reflect.TypeFor[podSpec](), reflect.TypeFor[corev1.PodSpec](), []string{"InitContainers", "Containers", "EphemeralContainers", "Volumes"}},
		{reflect.TypeFor[container](), reflect.TypeFor[corev1.Container](), []string{"Name", "Image"}},
		{reflect.TypeFor[container](), reflect.TypeFor[corev1.EphemeralContainerCommon](), []string{"Name", "Image"}},
		{reflect.TypeFor[podVolume](), reflect.TypeFor[corev1.Volume](), []string{"Name"}},
		{reflect.TypeFor[podVolume](), reflect.TypeFor[corev1.VolumeSource](), []string{"Image"}},
		{reflect.TypeFor[imageVolume](), reflect.TypeFor[corev1.ImageVolumeSource](), []string{"Reference"}},
		{reflect.TypeFor[objectMeta](), reflect.TypeFor[metav1.ObjectMeta](), []string{"GenerateName"}},
		{reflect.TypeFor[podTemplate](), reflect.TypeFor[corev1.PodTemplateSpec](), []string{"Spec"}},
	} {
		for _, name := range c.fields {
			o, _ := c.ours.FieldByName(name)
			th, _ := c.theirs.FieldByName(name)
			on, _, _ := strings.Cut(o.Tag.Get("json"), ",")
			tn, _, _ := strings.Cut(th.Tag.Get("json"), ",")
			if on == "" || on != tn {
				t.Errorf("%s.%s is %q in JSON, %s.%s %q", c.ours, name, on, c.theirs, name, tn)
			}
		}
	}
}

// kubernetesImages decodes raw as the API server does (sigs.k8s.io/json,
// case-sensitive, into k8s.io/api's types) and lists its images: the
// oracle of the differential tests.
func kubernetesImages(gvk metav1.GroupVersionKind, raw []byte) ([]ImageRef, error) {
	var spec *corev1.PodSpec
	var o any
	switch gvk.Kind {
	case "Pod":
		var p corev1.Pod
		o, spec = &p, &p.Spec
	case "Deployment":
		var d appsv1.Deployment
		o, spec = &d, &d.Spec.Template.Spec
	case "ReplicaSet":
		var d appsv1.ReplicaSet
		o, spec = &d, &d.Spec.Template.Spec
	case "StatefulSet":
		var d appsv1.StatefulSet
		o, spec = &d, &d.Spec.Template.Spec
	case "DaemonSet":
		var d appsv1.DaemonSet
		o, spec = &d, &d.Spec.Template.Spec
	case "Job":
		var d batchv1.Job
		o, spec = &d, &d.Spec.Template.Spec
	case "CronJob":
		var d batchv1.CronJob
		o, spec = &d, &d.Spec.JobTemplate.Spec.Template.Spec
	default:
		return nil, errNotJudged
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, o); err != nil {
		return nil, err
	}
	var refs []ImageRef
	for _, c := range spec.InitContainers {
		refs = append(refs, ImageRef{Field: "initContainers", Name: c.Name, Image: c.Image})
	}
	for _, c := range spec.Containers {
		refs = append(refs, ImageRef{Field: "containers", Name: c.Name, Image: c.Image})
	}
	for _, c := range spec.EphemeralContainers {
		refs = append(refs, ImageRef{Field: "ephemeralContainers", Name: c.Name, Image: c.Image})
	}
	for _, v := range spec.Volumes {
		if v.Image != nil {
			refs = append(refs, ImageRef{Field: "volumes", Name: v.Name, Image: v.Image.Reference})
		}
	}
	return refs, nil
}

// fixtureObjects are the objects of every fixture review, with their kinds.
func fixtureObjects(t testing.TB) (kinds []metav1.GroupVersionKind, objects [][]byte) {
	files, _ := filepath.Glob(filepath.Join("testdata", "requests", "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var review admissionv1.AdmissionReview
		if json.Unmarshal(b, &review) != nil || review.Request == nil {
			continue
		}
		for _, raw := range [][]byte{review.Request.Object.Raw, review.Request.OldObject.Raw} {
			if len(raw) > 0 {
				kinds = append(kinds, review.Request.Kind)
				objects = append(objects, raw)
			}
		}
	}
	if len(objects) < 10 {
		t.Fatalf("%d fixture objects, want the fixtures' (testdata/requests)", len(objects))
	}
	return kinds, objects
}

// TestDecodeMatchesKubernetes decodes every fixture object both ways and
// compares the images found. Every fixture is one the API server could
// send (its decoder takes it); the webhook refuses only those it must
// (pod-duplicate-image.json).
func TestDecodeMatchesKubernetes(t *testing.T) {
	kinds, objects := fixtureObjects(t)
	refused := 0
	for i, raw := range objects {
		want, werr := kubernetesImages(kinds[i], raw)
		if werr != nil {
			if !errors.Is(werr, errNotJudged) {
				t.Errorf("%s #%d: the API server's decoder refuses a fixture: %v", gvkString(kinds[i]), i, werr)
			}
			continue
		}
		obj, gerr := decodePodObject(kinds[i], raw)
		if gerr != nil {
			refused++
			continue // denied: TestDecodeAttacks and the fixtures' goldens say why
		}
		if got := images(obj.spec); !slices.Equal(got, want) {
			t.Errorf("%s #%d: images %v, the API server's decoder finds %v", gvkString(kinds[i]), i, got, want)
		}
	}
	if refused != 1 {
		t.Errorf("the webhook's decoder refuses %d fixture objects, want 1 (pod-duplicate-image.json)", refused)
	}
}

// FuzzDecodeMatchesKubernetes: whatever object both decoders accept, they
// find the same images in it. (One only the webhook's accepts is one the
// API server would not have sent: a wrong type in a field the webhook
// does not model.)
func FuzzDecodeMatchesKubernetes(f *testing.F) {
	kinds, objects := fixtureObjects(f)
	for i, raw := range objects {
		f.Add(kinds[i].Group, kinds[i].Kind, raw)
	}
	f.Fuzz(func(t *testing.T, group, kind string, raw []byte) {
		gvk := metav1.GroupVersionKind{Group: group, Version: "v1", Kind: kind}
		if !judgedKinds[gvk] {
			return
		}
		obj, err := decodePodObject(gvk, raw)
		if err != nil {
			return // refused: the webhook denies
		}
		want, werr := kubernetesImages(gvk, raw)
		if werr != nil {
			return // the API server would not have sent it
		}
		if got := images(obj.spec); !slices.Equal(got, want) {
			t.Fatalf("images %v, the API server's decoder finds %v in %q", got, want, raw)
		}
	})
}

// TestDecodeAttacks: what a crafted body could try against the decoder,
// and what the handler must answer. A 400 makes the API server apply the
// failurePolicy (Fail: denied); a 200 must carry a denial.
func TestDecodeAttacks(t *testing.T) {
	h := NewHandler(Fixed{accepted(t, testManifest(42))}, Options{})
	allowed := string(readFixture(t, "pod-allowed.json"))
	const pinned = `"image": "registry.lockstep.test/store/web:v1.4.2@sha256:1111111111111111111111111111111111111111111111111111111111111111"`
	if !strings.Contains(allowed, pinned) {
		t.Fatalf("pod-allowed.json no longer has %s", pinned)
	}
	edit := func(fixture, old, new string) string {
		body := string(readFixture(t, fixture))
		if !strings.Contains(body, old) {
			t.Fatalf("%s has no %q", fixture, old)
		}
		return strings.Replace(body, old, new, 1)
	}
	replace := func(old, new string) string { return edit("pod-allowed.json", old, new) }
	const manager = `"fieldManager": "kubectl-client-side-apply",`
	const foreign = `"image": "registry.lockstep.test/store/web:latest"`
	tests := []struct {
		name, body string
		code       int
		want       string // in the denial or the error
	}{
		{"the fixture itself", allowed, 200, ""},
		{"a second image after the pinned one", replace(pinned, pinned+", "+foreign), 200, `duplicate object member name "image"`},
		{"a second image before the pinned one", replace(pinned, foreign+", "+pinned), 200, `duplicate object member name "image"`},
		{"the same name escaped", replace(pinned, pinned+`, "im\u0061ge": "registry.lockstep.test/store/web:latest"`), 200, `duplicate object member name "image"`},
		{"a capitalised Image beside the pinned one", replace(pinned, pinned+`, "Image": "registry.lockstep.test/store/web:latest"`), 200, ""},
		{"a duplicate in a member the webhook does not model", replace(pinned, pinned+`, "workingDir": "/a", "workingDir": "/b"`), 200, `duplicate object member name "workingDir"`},
		{"a second containers list", replace(`"containers": [`, `"containers": [{"name": "x", `+foreign+`}], "containers": [`), 200, `duplicate object member name "containers"`},
		{"a second spec", replace(`"spec": {`, `"spec": {"containers": [{"name": "x", `+foreign+`}]}, "spec": {`), 200, `duplicate object member name "spec"`},
		{"a second operation in the review", replace(`"operation": "CREATE",`, `"operation": "CREATE", "operation": "DELETE",`), 400, `duplicate object member name "operation"`},
		{"a second operation and a duplicate image", strings.Replace(replace(`"operation": "CREATE",`, `"operation": "CREATE", "operation": "DELETE",`), pinned, pinned+", "+foreign, 1), 400, `duplicate object member name "operation" within "/request"`},
		{"a second uid after a duplicate image", strings.Replace(replace(pinned, pinned+", "+foreign), `"uid": "705ab4f5-6393-11e8-b7cc-42010a800001",`, `"uid": "705ab4f5-6393-11e8-b7cc-42010a800001", "uid": "other",`, 1), 400, `duplicate object member name "uid"`},
		{"a second object", replace(`"object": {`, `"object": {"kind": "Pod"}, "object": {`), 400, `duplicate object member name "object"`},
		{"invalid UTF-8 in an image", replace(pinned, `"image": "registry.lockstep.test/store/web:`+"\xff"+`"`), 400, "invalid UTF-8"},
		{"a lone surrogate escaped", replace(pinned, pinned+`, "workingDir": "\ud800"`), 400, "surrogate"},
		{"data after the review", allowed + `{}`, 400, "after top-level value"},
		// A duplicate inside oldObject or options is read past (decodeReview),
		// so these are the yeses that path can give.
		{"a duplicate in the old object: every image is judged, unchanged or not", edit("pod-update-unchanged-images.json", `"oldObject": {`, `"oldObject": {"kind": "Pod", `), 200, "is not one of release store-web@42's digests"},
		{"a duplicate in the options of an allowed pod", replace(manager, manager+` "fieldManager": "other",`), 200, ""},
		{"a duplicate in the options of a moved tag", edit("pod-moved-tag.json", manager, manager+` "fieldManager": "other",`), 200, `tag "v1.4.2" moved`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := post(t, h, []byte(tt.body))
			if rec.Code != tt.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.code, rec.Body)
			}
			msg := rec.Body.String()
			if rec.Code == http.StatusOK {
				var resp admissionv1.AdmissionReview
				if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Response == nil {
					t.Fatalf("no AdmissionReview: %s", rec.Body)
				}
				if tt.want == "" {
					if !resp.Response.Allowed {
						t.Fatalf("denied: %v", resp.Response.Result)
					}
					return
				}
				if resp.Response.Allowed || resp.Response.Result == nil {
					t.Fatalf("allowed: %s", rec.Body)
				}
				msg = resp.Response.Result.Message
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("%q does not say %q", msg, tt.want)
			}
		})
	}
}
