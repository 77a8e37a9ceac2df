# free_port prints a TCP port nothing listens on at 127.0.0.1 (sourced by
# scripts/radosgw.sh and scripts/bootgate-walkthrough.sh). The caller
# listens on it soon after; a port taken in between fails that start.
free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  echo "no free port found on 127.0.0.1" >&2; return 1
}
