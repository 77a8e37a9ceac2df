#!/usr/bin/env bash
# build-kube-apiserver.sh VERSION OUT: kube-apiserver from the Go module
# proxy (there is no Debian package, and envtest's downloads are not on the
# module proxy). k8s.io/kubernetes's go.mod replaces every k8s.io/* staging
# module with ./staging/src/k8s.io/X, which the module zip does not hold; so
# this copies the module, drops those replaces, requires the published
# k8s.io/X v0.MINOR.PATCH instead (the go command checks each against the
# checksum database as it downloads it), removes go.work and vendor/, and
# builds ./cmd/kube-apiserver static (CGO_ENABLED=0) with its version
# stamped, so that `OUT --version` prints "Kubernetes VERSION".
# About 900 CPU-seconds and 2 GB of RAM at link, cold. Called by
# scripts/lib/tools.sh's kube_apiserver, which caches OUT per machine.
set -euo pipefail
V=$1                        # k8s.io/kubernetes version, e.g. v1.34.4
OUT=$2
SV=v0.${V#v1.}              # the staging modules' version: v1.34.4 -> v0.34.4
export GOFLAGS=-mod=mod CGO_ENABLED=0
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
dir=$(cd / && go mod download -json "k8s.io/kubernetes@$V" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] || { echo "build-kube-apiserver: go mod download k8s.io/kubernetes@$V failed" >&2; exit 1; }
src=$work/kubernetes
cp -r "$dir" "$src"
chmod -R u+w "$src"
cd "$src"
rm -rf go.work go.work.sum vendor
args=()
for m in $(sed -n 's/^\t\(k8s.io\/[a-z0-9-]*\) => \.\/staging\/.*/\1/p' go.mod); do
  args+=("-dropreplace=$m")
  # Only the staging modules kubernetes requires (sample-cli-plugin and
  # sample-controller are not required, nor published).
  if grep -q "^	$m v0.0.0$" go.mod; then args+=("-require=$m@$SV"); fi
done
go mod edit "${args[@]}"
maj=${V#v}; min=${maj#*.}; maj=${maj%%.*}; min=${min%%.*}
go build -trimpath -o "$OUT" -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$V \
  -X k8s.io/component-base/version.gitMajor=$maj -X k8s.io/component-base/version.gitMinor=$min" ./cmd/kube-apiserver
