// Package kubetest is a real Kubernetes control plane for the integration
// tests: Debian's etcd and a kube-apiserver built from k8s.io/kubernetes
// (Version), on loopback ports, with a throwaway CA, a serving certificate
// for 127.0.0.1, service-account keys, two bearer tokens (AdminUser, in
// system:masters, and User, who may do nothing until a RoleBinding names
// it), RBAC and an audit log (Metadata level for pods, apps and batch).
// There is no kubelet, scheduler or controller-manager: pods stay Pending
// until a test writes their status through the pods/status subresource,
// workloads make no pods, and Namespace makes each namespace's "default"
// ServiceAccount itself (the ServiceAccount admission plugin refuses pods
// without it).
//
// A package starts one control plane (about 5 s on an idle machine) and
// shares it between its tests:
//
//	func TestMain(m *testing.M) { os.Exit(kubetest.Run(m)) }
//
//	func TestSomething(t *testing.T) {
//		c := kubetest.Shared(t)
//		c.Namespace(t, "shop", nil)
//		c.Must(t, http.StatusCreated, kubetest.Request{Method: "POST", Path: "/api/v1/namespaces/shop/pods", Body: pod})
//	}
//
// Start gives a test a control plane of its own, stopped when it ends.
//
// The binaries: kube-apiserver is $LOCKSTEP_TEST_KUBE_APISERVER, else the
// first on $PATH (scripts/test.sh puts the clone's .cache/bin there), else
// the per-machine build scripts/install-deps.sh makes,
// $LOCKSTEP_CACHE/tools/kube-apiserver@VERSION (default
// ~/.cache/lockstep/tools); etcd is Debian's etcd-server. When one is
// missing the test is skipped with what to run, or fails under
// LOCKSTEP_INTEGRATION=1 (set by scripts/test.sh): CI never passes by
// skipping.
package kubetest
