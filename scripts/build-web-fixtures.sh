#!/usr/bin/env bash
# Rebuilds the web fixtures under testdata/web with the real bundlers: for
# each app (testdata/web/NAME/app, with its package.json and
# package-lock.json pinning every package), a copy in a temporary directory,
# `npm ci`, `npm run build`, and its output folder copied to
# testdata/web/NAME/dist (dist/ unless the framework writes elsewhere: Next.js's
# out/, Angular's dist/PROJECT/browser, SvelteKit's adapter-static build/,
# React Router's build/client).
# The test suite reads only the committed dist/ and needs no npm; run this
# when an app or a pinned version changes, then `go test ./manifest/assets`
# (TestWebFixturesComplete, and the graph golden files with -update).
#   scripts/build-web-fixtures.sh [NAME...]   (default: every app)
# Needs Node.js 20 and npm 11 and the npm registry. Install scripts are not
# run (--ignore-scripts): none of these packages needs one to build (the
# native parts, esbuild's, rollup's, Next.js's SWC, come as npm
# optionalDependencies). The frameworks' telemetry is turned off.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
web=$root/testdata/web
if [ $# -eq 0 ]; then
  set -- $(cd "$web" && for d in */app; do echo "${d%/app}"; done)
fi
# out NAME: the folder, in the app, that its build writes the site to.
out() {
  case $1 in
    nextjs) echo out ;;
    angular) echo dist/fixture/browser ;;
    sveltekit) echo build ;;
    react-router) echo build/client ;;
    *) echo dist ;;
  esac
}
export NEXT_TELEMETRY_DISABLED=1 NG_CLI_ANALYTICS=false ASTRO_TELEMETRY_DISABLED=1
# A fixed folder, not mktemp's: some builds hash the path of their sources
# (Astro's island uid), so the same path gives the same bytes.
tmp=${TMPDIR:-/tmp}/lockstep-web-fixtures
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
echo "node $(node --version), npm $(npm --version)"
for name in "$@"; do
  app=$web/$name/app
  [ -f "$app/package-lock.json" ] || { echo "no $app/package-lock.json" >&2; exit 2; }
  echo "== $name"
  cp -R "$app" "$tmp/$name"
  start=$SECONDS
  (cd "$tmp/$name" && npm ci --ignore-scripts --no-audit --no-fund)
  installed=$SECONDS
  (cd "$tmp/$name" && npm run build)
  built=$SECONDS
  rm -rf "$web/$name/dist.new"
  cp -R "$tmp/$name/$(out "$name")" "$web/$name/dist.new"
  rm -rf "$web/$name/dist"
  mv "$web/$name/dist.new" "$web/$name/dist"
  echo "$name: $(find "$web/$name/dist" -type f | wc -l) files, $(du -sk "$web/$name/dist" | cut -f1) KB;" \
    "npm ci $((installed - start)) s, npm run build $((built - installed)) s"
  rm -rf "${tmp:?}/$name"
done
