"""`MINDGATE_TEST_REQUIRE_SERVICES=1` turns a PostgreSQL test's skip into a failure.

scripts/test.sh sets the variable once it has provisioned PostgreSQL; a suite that then
lost its database (an unset URL, no psql) must fail, never pass by skipping. Each
PostgreSQL suite is run by pytest in a child process without `MINDGATE_TEST_POSTGRES_URL`:
without the variable its tests are skipped and say why, with it they fail naming it. No
server or database is needed (the tests stop at their PostgreSQL fixture).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO, REQUIRE_SERVICES_VAR

# (suite, one of its PostgreSQL tests)
SUITES = [
    ("tests/attack/test_attack_otlp.py", "test_a_trace_split_across_two_instances_keeps_every_span"),
    ("tests/python/test_memory_postgres.py", "test_two_instances_share_one_postgres_memory"),
    ("tests/python/test_postgres_store.py", "test_a_run_lands_in_postgres_and_survives_a_restart"),
]


def run_without_postgres(suite: str, test: str, require: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("MINDGATE_TEST_POSTGRES_URL", REQUIRE_SERVICES_VAR)}
    if require:
        env[REQUIRE_SERVICES_VAR] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rsf", "-p", "no:cacheprovider",
         f"{suite}::{test}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )


@pytest.mark.parametrize(("suite", "test"), SUITES)
def test_a_missing_postgres_is_a_skip_that_says_why(suite: str, test: str) -> None:
    done = run_without_postgres(suite, test, require=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "1 skipped" in out and "skipped: MINDGATE_TEST_POSTGRES_URL not set" in out, out


@pytest.mark.parametrize(("suite", "test"), SUITES)
def test_a_missing_postgres_fails_when_services_are_required(suite: str, test: str) -> None:
    done = run_without_postgres(suite, test, require=True)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    # A fixture that fails makes pytest report an error (exit status 1), never a skip.
    assert ("1 error" in out or "1 failed" in out) and "1 skipped" not in out, out
    assert (f"{REQUIRE_SERVICES_VAR}=1 but this test would be skipped: "
            "MINDGATE_TEST_POSTGRES_URL not set") in out, out
