#!/usr/bin/env bash
# Packages the Helm chart for a release: scripts/chart-package.sh TAG DIGEST
# OUTDIR writes OUTDIR/lockstep-VERSION.tgz (VERSION is TAG without its v)
# and prints its path. The chart's version is VERSION, its appVersion TAG
# (the image's tag), and its image is pinned by DIGEST, the digest the
# release pushed (image.digest in values.yaml). It packages a copy:
# deploy/helm/lockstep is left as it is. .github/workflows/release.yml runs
# it, then pushes the chart to oci://ghcr.io/lockstep-dev/charts and signs
# it; scripts/chart_test.go runs it against a digest of its own.
#
# Exit 2 for a TAG that is not vMAJOR.MINOR.PATCH[-PRERELEASE] or a DIGEST
# that is not sha256:<64 hex>; non-zero when helm lint finds anything.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.cache/bin:$PATH"

if [ $# -ne 3 ]; then
  echo "usage: scripts/chart-package.sh TAG DIGEST OUTDIR" >&2
  exit 2
fi
tag=$1 digest=$2 out=$3
if ! [[ $tag =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "chart-package: tag \"$tag\" is not vMAJOR.MINOR.PATCH[-PRERELEASE]" >&2
  exit 2
fi
if ! [[ $digest =~ ^sha256:[0-9a-f]{64}$ ]]; then
  echo "chart-package: digest \"$digest\" is not sha256:<64 hex digits>" >&2
  exit 2
fi
version=${tag#v}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R deploy/helm/lockstep "$work/lockstep"
# values.yaml has one digest line, image.digest, empty: pin it, or stop.
sed -i "s|^  digest: \"\"\$|  digest: \"$digest\"|" "$work/lockstep/values.yaml"
if [ "$(grep -c "^  digest: \"$digest\"\$" "$work/lockstep/values.yaml")" != 1 ]; then
  echo "chart-package: could not pin image.digest in deploy/helm/lockstep/values.yaml (want one line '  digest: \"\"')" >&2
  exit 1
fi
helm lint --strict "$work/lockstep" --kube-version 1.30.0 -f deploy/helm/testdata/kustomize-values.yaml >&2
mkdir -p "$out"
helm package "$work/lockstep" --version "$version" --app-version "$tag" --destination "$out" >&2
echo "$out/lockstep-$version.tgz"
