"""Shared fixtures for the attack suite: hostile inputs against the real `mindgate serve`.

Every test here starts the real binary (`$MINDGATE_BIN`, default `target/debug/mindgate`)
on a free loopback port with a temporary `MINDGATE_HOME`, replays one finding of the
hardening review, and asserts the fixed behaviour. Loops are bounded in count and time;
traffic goes to 127.0.0.1 only.

The server harness (`MindgateServer`, `free_port`, the `mindgate` fixture) is the one of
the real-client tests in `tests/python/conftest.py`, loaded here so both suites share it.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

_HARNESS = pathlib.Path(__file__).resolve().parents[1] / "python" / "conftest.py"
_spec = importlib.util.spec_from_file_location("mindgate_harness", _HARNESS)
assert _spec is not None and _spec.loader is not None
harness = importlib.util.module_from_spec(_spec)
sys.modules["mindgate_harness"] = harness
_spec.loader.exec_module(harness)

BIN = harness.BIN
REPO = harness.REPO
MindgateServer = harness.MindgateServer
free_port = harness.free_port
mindgate = harness.mindgate  # the fixture: a fresh server per test
postgres_required = harness.postgres_required  # the fixture: PostgreSQL, else skip or fail
skip_or_fail = harness.skip_or_fail
psql_path = harness.psql_path
REQUIRE_SERVICES_VAR = harness.REQUIRE_SERVICES_VAR
POSTGRES_URL = harness.POSTGRES_URL
