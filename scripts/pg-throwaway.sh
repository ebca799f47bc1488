#!/usr/bin/env bash
# A throwaway PostgreSQL for the test suites: a cluster in a temporary directory, on a
# free loopback port, trust authentication on 127.0.0.1 only, run as an unprivileged user.
#
#   eval "$(scripts/pg-throwaway.sh start)"   # exports MINDGATE_TEST_POSTGRES_URL and
#                                              # MINDGATE_TEST_POSTGRES_DIR
#   scripts/pg-throwaway.sh stop "$MINDGATE_TEST_POSTGRES_DIR"
#
#   scripts/pg-throwaway.sh start --tls        # the same, TLS only: ssl=on with a CA and a
#                                              # server certificate made now (openssl),
#                                              # `hostssl` lines only, so a connection
#                                              # without TLS is refused; also exports
#                                              # MINDGATE_TEST_POSTGRES_CA (the CA's PEM) and
#                                              # MINDGATE_TEST_POSTGRES_WRONG_CA (another CA)
#
# `start` installs Debian's `postgresql` package when no server binaries are found (as
# root; otherwise it says what to install and fails). As root the cluster runs as the
# `postgres` user (created by that package); otherwise as the calling user. It prints
# shell `export` lines on stdout and everything else on stderr. `stop` stops the server
# and removes the directory; it is safe to call twice.
#
# Tests create their own databases or schemas inside this cluster, so suites may run in
# parallel. The cluster favours speed over durability (fsync off): it holds test data
# only. Set MINDGATE_PG_DURABLE=1 to keep PostgreSQL's durable defaults (for benchmarks).
set -euo pipefail

say() { printf 'pg-throwaway: %s\n' "$*" >&2; }

bin_dir() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$found" ] && [ -x "$found/initdb" ]; then
    printf '%s\n' "$found"
  fi
}

install_server() {
  if [ "$(id -u)" != 0 ]; then
    say "no PostgreSQL server binaries under /usr/lib/postgresql; install Debian's 'postgresql' package"
    exit 1
  fi
  say "installing Debian's postgresql package"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
}

free_port() {
  python3 - <<'PY'
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

# Runs a command as the cluster's owner.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# A CA, a server certificate it signs for 127.0.0.1 and localhost, and a second CA that
# signed nothing, in $1 (owned by the cluster's owner: the key must be private to it).
make_certs() {
  local tls=$1
  if ! command -v openssl >/dev/null 2>&1; then
    say "--tls needs the openssl command (Debian package 'openssl')"
    exit 1
  fi
  mkdir -p "$tls"
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  local ca_ext=(-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign")
  openssl req -x509 "${ec[@]}" -keyout "$tls/ca.key" -out "$tls/ca.pem" -days 2 \
    -subj "/CN=Mindgate throwaway CA" "${ca_ext[@]}" 2>/dev/null
  openssl req -x509 "${ec[@]}" -keyout "$tls/wrong-ca.key" -out "$tls/wrong-ca.pem" -days 2 \
    -subj "/CN=Mindgate unrelated CA" "${ca_ext[@]}" 2>/dev/null
  openssl req "${ec[@]}" -keyout "$tls/server.key" -out "$tls/server.csr" \
    -subj "/CN=localhost" 2>/dev/null
  printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "basicConstraints=CA:FALSE" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >"$tls/server.ext"
  openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" \
    -CAcreateserial -out "$tls/server.crt" -days 2 -extfile "$tls/server.ext" 2>/dev/null
  chmod 600 "$tls/server.key"
  chmod 644 "$tls/ca.pem" "$tls/wrong-ca.pem"
  if [ "$(id -u)" = 0 ]; then
    chown -R postgres: "$tls"
  fi
}

start() {
  local tls_only=""
  if [ "${1:-}" = "--tls" ]; then
    tls_only=1
  fi
  local bin
  bin=$(bin_dir)
  if [ -z "$bin" ]; then
    install_server
    bin=$(bin_dir)
  fi
  if [ -z "$bin" ]; then
    say "PostgreSQL server binaries not found after installing"
    exit 1
  fi
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    say "the 'postgres' user is missing (the postgresql package creates it)"
    exit 1
  fi
  local dir
  dir=$(mktemp -d -t mindgate-pg.XXXXXX)
  chmod 700 "$dir"
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$dir"
  fi
  as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 \
    --locale=C --no-sync >"$dir/initdb.log" 2>&1 || {
    say "initdb failed:"
    cat "$dir/initdb.log" >&2
    rm -rf "$dir"
    exit 1
  }
  # Only TCP from 127.0.0.1 and the cluster's own socket directory (inside $dir).
  local host_line="host all all 127.0.0.1/32 trust" ssl=""
  if [ -n "$tls_only" ]; then
    make_certs "$dir/tls"
    host_line="hostssl all all 127.0.0.1/32 trust"
    ssl="-c ssl=on -c ssl_cert_file=$dir/tls/server.crt -c ssl_key_file=$dir/tls/server.key"
  fi
  as_owner sh -c "printf '%s\n' 'local all all trust' '$host_line' >'$dir/data/pg_hba.conf'"
  local fast="-c fsync=off -c synchronous_commit=off -c full_page_writes=off $ssl"
  if [ -n "${MINDGATE_PG_DURABLE:-}" ]; then
    fast=""
  fi
  local port attempt
  for attempt in 1 2 3; do
    port=$(free_port)
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 $fast" \
      start >/dev/null 2>&1; then
      printf 'export MINDGATE_TEST_POSTGRES_URL=%s\n' "postgres://postgres@127.0.0.1:$port/postgres"
      printf 'export MINDGATE_TEST_POSTGRES_DIR=%s\n' "$dir"
      if [ -n "$tls_only" ]; then
        printf 'export MINDGATE_TEST_POSTGRES_CA=%s\n' "$dir/tls/ca.pem"
        printf 'export MINDGATE_TEST_POSTGRES_WRONG_CA=%s\n' "$dir/tls/wrong-ca.pem"
      fi
      say "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (cluster in $dir)"
      return 0
    fi
    say "start on port $port failed (attempt $attempt)"
  done
  cat "$dir/server.log" >&2 || true
  rm -rf "$dir"
  exit 1
}

stop() {
  local dir=${1:-}
  if [ -z "$dir" ]; then
    say "usage: $0 stop DIR"
    exit 2
  fi
  case "$dir" in
    */mindgate-pg.*) ;;
    *)
      say "refusing to remove $dir: not a directory made by '$0 start'"
      exit 2
      ;;
  esac
  if [ -f "$dir/data/postmaster.pid" ]; then
    local bin
    bin=$(bin_dir)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
      as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) start "${2:-}" ;;
  stop) stop "${2:-}" ;;
  *)
    say "usage: $0 start [--tls] | stop DIR"
    exit 2
    ;;
esac
