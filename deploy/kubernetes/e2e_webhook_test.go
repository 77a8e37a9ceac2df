package kubernetes

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/kubetest"
)

// apiCase is one request through the API server to the webhook, and what
// the API server must answer, keep and audit.
type apiCase struct {
	name string
	req  kubetest.Request
	// code is the API server's status; msg a pattern its Status message
	// (a refusal) must match.
	code int
	msg  string
	// warning is a pattern one Warning header must match; "" wants none.
	warning string
	// decision is the lockstep decision the audit event must carry
	// (images.lockstep.dev/decision); "" wants no lockstep annotation (the
	// webhook was not called).
	decision string
	// stored is the object's path, read after the request: it must exist
	// with the images in want (every one, in the stored JSON), or, when
	// want is nil, not exist at all (nothing was written).
	stored string
	want   []string
}

// TestWebhookEndToEnd registers the shipped ValidatingWebhookConfiguration
// (clientConfig pointed at a `lockstep webhook` on loopback) in a real API
// server and sends it pods and every workload kind, created, updated,
// dry-run, by digest and by tag, under a generated name, and ephemeral
// containers through their subresource: the API server must keep what the
// release pins and refuse the rest with lockstep's message, call the
// webhook on dry runs, leave ungoverned and system namespaces alone, pass
// warn mode's findings as Warning headers and lockstep's audit
// annotations to its audit log.
func TestWebhookEndToEnd(t *testing.T) {
	c := kubetest.Shared(t)
	r := newRelease(t)
	tl := newWebhookTLS(t)
	enforce, _ := startWebhook(t, tl, "--manifest", r.Manifest, "--release", "store-web", "--key", r.Key)
	warn, _ := startWebhook(t, tl, "--manifest", r.Manifest, "--release", "store-web", "--key", r.Key, "--mode", "warn")
	c.Namespace(t, "shop", map[string]string{optInLabel: optInValue})
	c.Namespace(t, "shop-warn", map[string]string{optInLabel: "warn"})
	c.Namespace(t, "free", nil)
	// lockstep's own namespace, opted in by mistake: the shipped
	// configuration leaves it out all the same.
	c.Namespace(t, namespace, map[string]string{optInLabel: optInValue})
	register(t, c, shippedWebhookConfiguration(t, "lockstep", enforce, tl.caBundle, optInValue))
	register(t, c, shippedWebhookConfiguration(t, "lockstep-warn", warn, tl.caBundle, "warn"))

	pinned, tag, other := r.Repo+"@"+r.Digest(), r.Repo+":v1", r.Repo+"@"+r.Other
	waitFor(t, c, kubetest.Request{Method: "POST", Path: "/api/v1/namespaces/shop/pods?dryRun=All", Body: pod("probe", tag, nil)},
		func(r *kubetest.Response) bool { return r.Code == http.StatusForbidden })
	waitFor(t, c, kubetest.Request{Method: "POST", Path: "/api/v1/namespaces/shop-warn/pods?dryRun=All", Body: pod("probe", tag, nil)},
		func(r *kubetest.Response) bool { return len(r.Warnings()) > 0 })

	const pods = "/api/v1/namespaces/shop/pods"
	post := func(path string, body any) kubetest.Request {
		return kubetest.Request{Method: "POST", Path: path, Body: body}
	}
	patch := func(path, body string) kubetest.Request {
		return kubetest.Request{Method: "PATCH", Path: path, Body: body, ContentType: "application/strategic-merge-patch+json"}
	}
	denied := func(subject string) string {
		return `^admission webhook "images.lockstep.dev" denied the request: lockstep denied ` + regexp.QuoteMeta(subject) + `: not release store-web@3: `
	}
	ephemeral := func(image string) string {
		return `{"spec":{"ephemeralContainers":[{"name":"debug","image":"` + image + `","targetContainerName":"web"}]}}`
	}
	cases := []apiCase{
		{name: "a Pod at the release digest is kept", req: post(pods, pod("good", pinned, nil)), code: 201, decision: "allowed", stored: pods + "/good", want: []string{pinned}},
		{name: "a Pod at tag@digest is kept", req: post(pods, pod("tagdig", r.Repo+":v1@"+r.Digest(), nil)), code: 201, decision: "allowed", stored: pods + "/tagdig", want: []string{r.Repo + ":v1@" + r.Digest()}},
		{name: "a Pod by tag is refused", req: post(pods, pod("tag", tag, nil)), code: 403, msg: denied("Pod shop/tag") + `.*not pinned by digest`, decision: "denied", stored: pods + "/tag"},
		{name: "a Pod at another digest of the repository is refused", req: post(pods, pod("other", other, nil)), code: 403, msg: denied("Pod shop/other"), decision: "denied", stored: pods + "/other"},
		{name: "a Pod of a repository the release does not have is refused", req: post(pods, pod("unmanaged", "docker.io/library/nginx@"+r.Digest(), nil)), code: 403, msg: denied("Pod shop/unmanaged"), decision: "denied", stored: pods + "/unmanaged"},
		{name: "a Pod by tag with its registry spelt localhost is refused, not unmanaged", req: post(pods, pod("alias", strings.Replace(tag, "127.0.0.1", "localhost", 1), nil)), code: 403, msg: denied("Pod shop/alias") + `.*not pinned by digest`, decision: "denied", stored: pods + "/alias"},
		{name: "a Pod whose second container is by tag is refused", req: post(pods, pod("second", pinned, map[string]any{"containers": []any{map[string]any{"name": "web", "image": pinned}, map[string]any{"name": "side", "image": tag}}})), code: 403, msg: denied("Pod shop/second") + `.*container "side"`, decision: "denied", stored: pods + "/second"},
		{name: "a dry run at the digest is admitted and nothing is kept", req: post(pods+"?dryRun=All", pod("dry", pinned, nil)), code: 201, decision: "allowed", stored: pods + "/dry"},
		{name: "a dry run by tag is refused (the webhook sees dry runs)", req: post(pods+"?dryRun=All", pod("drytag", tag, nil)), code: 403, msg: denied("Pod shop/drytag"), decision: "denied", stored: pods + "/drytag"},
		{name: "a generateName Pod by tag is refused under the name the API server gave it", req: post(pods, pod("gen-", tag, nil)), code: 403, msg: `lockstep denied Pod shop/gen-[a-z0-9]{5}: `, decision: "denied"},
		{name: "a Pod by tag created by server-side apply is refused", req: kubetest.Request{Method: "PATCH", Path: pods + "/applied?fieldManager=e2e", Body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"applied"},"spec":{"containers":[{"name":"web","image":"` + tag + `"}]}}`, ContentType: "application/apply-patch+yaml"}, code: 403, msg: denied("Pod shop/applied"), decision: "denied", stored: pods + "/applied"},
		{name: "a Pod at the digest created by server-side apply is kept", req: kubetest.Request{Method: "PATCH", Path: pods + "/applied-ok?fieldManager=e2e", Body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"applied-ok"},"spec":{"containers":[{"name":"web","image":"` + pinned + `"}]}}`, ContentType: "application/apply-patch+yaml"}, code: 201, decision: "allowed", stored: pods + "/applied-ok", want: []string{pinned}},
		{name: "a Pod with an init container by tag is refused", req: post(pods, pod("init", pinned, map[string]any{"initContainers": []any{map[string]any{"name": "init", "image": tag}}})), code: 403, msg: denied("Pod shop/init") + `.*init container "init"`, decision: "denied", stored: pods + "/init"},
		{name: "a Pod with an image volume by tag is refused", req: post(pods, pod("imgvol", pinned, map[string]any{"volumes": []any{map[string]any{"name": "data", "image": map[string]any{"reference": tag}}}})), code: 403, msg: denied("Pod shop/imgvol") + `.*image volume "data"`, decision: "denied", stored: pods + "/imgvol"},
		{name: "a Pod with an image volume at the digest is kept", req: post(pods, pod("imgvolok", pinned, map[string]any{"volumes": []any{map[string]any{"name": "data", "image": map[string]any{"reference": pinned}}}})), code: 201, decision: "allowed", stored: pods + "/imgvolok", want: []string{pinned}},
		{name: "an update of a kept Pod, its images unchanged, is admitted", req: kubetest.Request{Method: "PATCH", Path: pods + "/good", Body: `{"metadata":{"labels":{"touched":"yes"}}}`}, code: 200, decision: "allowed", stored: pods + "/good", want: []string{pinned, `"touched":"yes"`}},
		{name: "an update of a kept Pod's image to another digest is refused and the Pod unchanged", req: patch(pods+"/good", `{"spec":{"containers":[{"name":"web","image":"`+other+`"}]}}`), code: 403, msg: denied("Pod shop/good"), decision: "denied", stored: pods + "/good", want: []string{pinned}},
		{name: "an ephemeral container by tag, through pods/ephemeralcontainers, is refused", req: patch(pods+"/good/ephemeralcontainers", ephemeral(tag)), code: 403, msg: denied("Pod ephemeralcontainers shop/good") + `ephemeral container "debug" image ".*": tag "v1" is not pinned by digest`, decision: "denied"},
		{name: "an ephemeral container of an unmanaged debug image is refused", req: patch(pods+"/good/ephemeralcontainers", ephemeral("docker.io/library/busybox:1.36")), code: 403, msg: denied("Pod ephemeralcontainers shop/good") + `.*is not governed by release store-web@3`, decision: "denied"},
		{name: "an ephemeral container at the digest is admitted", req: patch(pods+"/good/ephemeralcontainers", ephemeral(pinned)), code: 200, decision: "allowed", stored: pods + "/good", want: []string{`"ephemeralContainers":[{"name":"debug","image":"` + pinned + `"`}},
		{name: "a Pod's status (the kubelet's write) is not sent to the webhook", req: kubetest.Request{Method: "PATCH", Path: pods + "/good/status", Body: `{"status":{"phase":"Running"}}`}, code: 200, stored: pods + "/good", want: []string{`"phase":"Running"`}},
		{name: "a Pod by tag in a namespace that did not opt in is not governed", req: post("/api/v1/namespaces/free/pods", pod("free", tag, nil)), code: 201, stored: "/api/v1/namespaces/free/pods/free", want: []string{tag}},
		{name: "a Pod by tag in lockstep's own namespace, opted in, is still left out", req: post("/api/v1/namespaces/"+namespace+"/pods", pod("own", tag, nil)), code: 201, stored: "/api/v1/namespaces/" + namespace + "/pods/own", want: []string{tag}},
		{name: "warn mode: a Pod by tag is admitted with lockstep's Warning", req: post("/api/v1/namespaces/shop-warn/pods", pod("warned", tag, nil)), code: 201, warning: `^lockstep \(warn mode\): container "web" image ".*not pinned by digest`, decision: "warned", stored: "/api/v1/namespaces/shop-warn/pods/warned", want: []string{tag}},
		{name: "warn mode: a Pod at the digest has no Warning", req: post("/api/v1/namespaces/shop-warn/pods", pod("quiet", pinned, nil)), code: 201, decision: "allowed", stored: "/api/v1/namespaces/shop-warn/pods/quiet", want: []string{pinned}},
		{name: "a DELETE is not sent to the webhook", req: kubetest.Request{Method: "DELETE", Path: pods + "/tagdig"}, code: 200},
	}
	cases = append(cases, workloadCases(r.Repo, pinned, tag, denied)...)
	ids := make([]string, len(cases))
	for i, tc := range cases {
		resp := c.Do(t, tc.req)
		ids[i] = resp.Header.Get("Audit-Id")
		if resp.Code != tc.code {
			t.Errorf("%s: HTTP %d, want %d: %s", tc.name, resp.Code, tc.code, resp.Body)
			continue
		}
		if tc.msg != "" && !regexp.MustCompile(tc.msg).MatchString(resp.Message()) {
			t.Errorf("%s: message %q, want /%s/", tc.name, resp.Message(), tc.msg)
		}
		if tc.msg == "" && resp.Message() != "" && resp.Code >= 300 {
			t.Errorf("%s: message %q", tc.name, resp.Message())
		}
		ws := resp.Warnings()
		switch {
		case tc.warning == "" && len(ws) > 0:
			t.Errorf("%s: Warning headers %q, want none", tc.name, ws)
		case tc.warning != "" && (len(ws) != 1 || !regexp.MustCompile(tc.warning).MatchString(ws[0])):
			t.Errorf("%s: Warning headers %q, want one matching /%s/", tc.name, ws, tc.warning)
		}
		if tc.stored == "" {
			continue
		}
		got := c.Do(t, kubetest.Request{Method: "GET", Path: tc.stored})
		switch {
		case tc.want == nil && got.Code != http.StatusNotFound:
			t.Errorf("%s: GET %s: HTTP %d, want 404 (nothing kept)", tc.name, tc.stored, got.Code)
		case tc.want != nil && got.Code != http.StatusOK:
			t.Errorf("%s: GET %s: HTTP %d, want it kept", tc.name, tc.stored, got.Code)
		case tc.want != nil:
			for _, w := range tc.want {
				if !strings.Contains(string(got.Body), w) {
					t.Errorf("%s: the API server keeps %s without %q:\n%s", tc.name, tc.stored, w, got.Body)
				}
			}
		}
	}
	// The API server called both webhooks without a failure and took
	// every audit annotation they gave.
	log, err := os.ReadFile(c.APIServerLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, "failed to set admission audit annotation") ||
			(strings.Contains(line, "failed calling webhook") && (strings.Contains(line, enforce) || strings.Contains(line, warn))) {
			t.Errorf("kube-apiserver: %s", line)
		}
	}
	// What the API server wrote to its audit log of lockstep's answers.
	audit := auditAnnotations(t, c, ids)
	for i, tc := range cases {
		ann, ok := audit[ids[i]]
		if !ok {
			t.Errorf("%s: no audit event (Audit-Id %q)", tc.name, ids[i])
			continue
		}
		if got := ann["images.lockstep.dev/decision"]; got != tc.decision {
			t.Errorf("%s: audit annotation images.lockstep.dev/decision %q, want %q (%v)", tc.name, got, tc.decision, ann)
		}
		if tc.decision != "" && (ann["images.lockstep.dev/release"] != "store-web@3" || !strings.HasPrefix(ann["images.lockstep.dev/manifest-digest"], "sha256:")) {
			t.Errorf("%s: audit annotations %v, want the release and its manifest digest", tc.name, ann)
		}
		if ann["images.lockstep.dev/manifest-unsigned"] != "" {
			t.Errorf("%s: the manifest is signed, but the audit says %v", tc.name, ann)
		}
	}
}

// workloadCases: every workload kind the shipped configuration names,
// created at the digest (kept) and by tag (refused, nothing kept), a
// Deployment's scale and template updates, and a CronJob's job template
// moved to a tag.
func workloadCases(repo, pinned, tag string, denied func(string) string) []apiCase {
	tmpl := func(app, image, restart string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"labels": map[string]string{"app": app}},
			"spec":     map[string]any{"restartPolicy": restart, "containers": []any{map[string]any{"name": "web", "image": image}}},
		}
	}
	sel := func(app string) map[string]any {
		return map[string]any{"matchLabels": map[string]string{"app": app}}
	}
	type kind struct{ kind, group, plural string }
	kinds := []kind{
		{"Deployment", "apps", "deployments"}, {"ReplicaSet", "apps", "replicasets"}, {"StatefulSet", "apps", "statefulsets"},
		{"DaemonSet", "apps", "daemonsets"}, {"Job", "batch", "jobs"}, {"CronJob", "batch", "cronjobs"},
	}
	object := func(k kind, name, image string) map[string]any {
		var spec map[string]any
		switch k.kind {
		case "Job":
			spec = map[string]any{"template": tmpl(name, image, "Never")}
		case "CronJob":
			spec = map[string]any{"schedule": "*/5 * * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": tmpl(name, image, "Never")}}}
		default:
			spec = map[string]any{"selector": sel(name), "template": tmpl(name, image, "Always")}
			if k.kind == "StatefulSet" {
				spec["serviceName"] = name
			}
		}
		return map[string]any{"apiVersion": k.group + "/v1", "kind": k.kind, "metadata": map[string]any{"name": name}, "spec": spec}
	}
	var out []apiCase
	for _, k := range kinds {
		path := "/apis/" + k.group + "/v1/namespaces/shop/" + k.plural
		lk := strings.ToLower(k.kind)
		out = append(out,
			apiCase{name: "a " + k.kind + " at the release digest is kept", req: kubetest.Request{Method: "POST", Path: path, Body: object(k, lk+"-ok", pinned)},
				code: 201, decision: "allowed", stored: path + "/" + lk + "-ok", want: []string{pinned}},
			apiCase{name: "a " + k.kind + " by tag is refused", req: kubetest.Request{Method: "POST", Path: path, Body: object(k, lk+"-tag", tag)},
				code: 403, msg: denied(k.kind + " shop/" + lk + "-tag"), decision: "denied", stored: path + "/" + lk + "-tag"},
			apiCase{name: "a dry-run " + k.kind + " by tag is refused", req: kubetest.Request{Method: "POST", Path: path + "?dryRun=All", Body: object(k, lk+"-drytag", tag)},
				code: 403, msg: denied(k.kind + " shop/" + lk + "-drytag"), decision: "denied"},
		)
	}
	const deploy = "/apis/apps/v1/namespaces/shop/deployments/deployment-ok"
	smp := "application/strategic-merge-patch+json"
	toTag := `{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"` + tag + `"}]}}}}`
	for _, k := range kinds[1:4] { // ReplicaSet, StatefulSet, DaemonSet (Deployment below)
		path := "/apis/" + k.group + "/v1/namespaces/shop/" + k.plural + "/" + strings.ToLower(k.kind) + "-ok"
		out = append(out, apiCase{name: "a " + k.kind + "'s template moved to a tag is refused and the " + k.kind + " unchanged",
			req:  kubetest.Request{Method: "PATCH", Path: path, Body: toTag, ContentType: smp},
			code: 403, msg: denied(k.kind + " shop/" + strings.ToLower(k.kind) + "-ok"), decision: "denied", stored: path, want: []string{pinned}})
	}
	out = append(out, apiCase{name: "a Job's template moved to a tag is refused by the API server itself (immutable), before the webhook",
		req:  kubetest.Request{Method: "PATCH", Path: "/apis/batch/v1/namespaces/shop/jobs/job-ok", Body: toTag, ContentType: smp},
		code: 422, msg: `field is immutable`, stored: "/apis/batch/v1/namespaces/shop/jobs/job-ok", want: []string{pinned}})
	return append(out,
		apiCase{name: "a Deployment's replicas changed, images unchanged, is admitted", req: kubetest.Request{Method: "PATCH", Path: deploy, Body: `{"spec":{"replicas":3}}`},
			code: 200, decision: "allowed", stored: deploy, want: []string{`"replicas":3`, pinned}},
		apiCase{name: "a Deployment scaled through its scale subresource is not judged", req: kubetest.Request{Method: "PATCH", Path: deploy + "/scale", Body: `{"spec":{"replicas":2}}`},
			code: 200, stored: deploy, want: []string{`"replicas":2`}},
		apiCase{name: "a Deployment's template moved to a tag is refused and the Deployment unchanged",
			req:  kubetest.Request{Method: "PATCH", Path: deploy, Body: toTag, ContentType: smp},
			code: 403, msg: denied("Deployment shop/deployment-ok"), decision: "denied", stored: deploy, want: []string{pinned}},
		apiCase{name: "a CronJob's job template moved to another repository is refused",
			req:  kubetest.Request{Method: "PATCH", Path: "/apis/batch/v1/namespaces/shop/cronjobs/cronjob-ok", Body: `{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"docker.io/library/nginx:1.27"}]}}}}}}`, ContentType: smp},
			code: 403, msg: denied("CronJob shop/cronjob-ok"), decision: "denied", stored: "/apis/batch/v1/namespaces/shop/cronjobs/cronjob-ok", want: []string{pinned}},
		apiCase{name: "a ReplicaSet deleted is not sent to the webhook", req: kubetest.Request{Method: "DELETE", Path: "/apis/apps/v1/namespaces/shop/replicasets/replicaset-ok"}, code: 200},
	)
}
