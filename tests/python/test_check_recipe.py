"""The CI recipe of docs/evaluate.md, run as written, with the real graphmind-ai client:
`mindgate serve` holds the run database, the agent runs with the SDK attached, a baseline
run is exported with `mindgate export --jsonl`, then `mindgate check --app … --latest
--baseline baseline.jsonl --junit report.xml` passes for the same agent and fails for a
changed one (an extra tool call, a changed answer, a cost blow-up) with the expected rule
names, a valid JUnit file, and the result stored with the run (an annotation of kind check).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

from conftest import BIN, MindgateServer

HERE = pathlib.Path(__file__).resolve().parent

RULES = """\
[tools]
same = "sequence"

[errors]
no_new = true

[cost]
max_increase_pct = 50

[[output]]
node = "llm:answer"
path = "/text"
same_as_baseline = true
"""


def run_agent(mindgate: MindgateServer, version: str) -> str:
    env = dict(os.environ, GRAPHMIND_URL=mindgate["ingest"], AGENT_VERSION=version, PYTHONUNBUFFERED="1")
    out = subprocess.run([sys.executable, str(HERE / "ci_agent.py")], env=env, capture_output=True, text=True, timeout=60)
    assert "RUN-END ok" in out.stdout, out.stdout + out.stderr
    run_id = out.stdout.split("RUN-ID ", 1)[1].split()[0]
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        status, run = mindgate.request("GET", f"/api/runs/{run_id}")
        if status == 200 and run["status"] == "ok":
            return run_id
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not finish")


def mindgate_cli(mindgate: MindgateServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MINDGATE_HOME=str(mindgate.home))
    env.pop("MINDGATE_DB", None)
    return subprocess.run([BIN, *args], env=env, capture_output=True, text=True, timeout=120)


def junit(path: pathlib.Path) -> tuple[ET.Element, dict[str, str | None]]:
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    cases = {c.get("name", ""): (c.find("failure").get("message") if c.find("failure") is not None else None) for c in suite.iter("testcase")}
    return suite, cases


def test_the_ci_recipe_passes_an_unchanged_agent_and_fails_a_changed_one(mindgate, tmp_path):
    baseline_run = run_agent(mindgate, "1")
    baseline = tmp_path / "baseline.jsonl"
    out = mindgate_cli(mindgate, "export", baseline_run, "--jsonl", str(baseline))
    assert out.returncode == 0, out.stderr
    rules = tmp_path / "mindgate-rules.toml"
    rules.write_text(RULES)

    # The same agent: every rule holds (the default set and the rules file).
    run_agent(mindgate, "1")
    report = tmp_path / "report.xml"
    out = mindgate_cli(mindgate, "check", "--app", "ci-agent", "--latest", "--baseline", str(baseline), "--junit", str(report))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "passed: 3 rule(s)" in out.stdout, out.stdout
    out = mindgate_cli(mindgate, "check", "--app", "ci-agent", "--latest", "--baseline", str(baseline), "--rules", str(rules), "--junit", str(report))
    assert out.returncode == 0, out.stdout + out.stderr
    suite, cases = junit(report)
    assert suite.get("failures") == "0" and suite.get("tests") == "4", ET.tostring(suite)
    assert all(message is None for message in cases.values()), cases

    # The changed agent: an extra tool call, another answer, ten times the tokens.
    changed_run = run_agent(mindgate, "2")
    out = mindgate_cli(mindgate, "check", "--app", "ci-agent", "--latest", "--baseline", str(baseline), "--rules", str(rules), "--junit", str(report))
    print(out.stdout)
    assert out.returncode == 1, out.stdout + out.stderr
    for failed in ("tools.sequence", "cost.max_increase_pct", "output.same_as_baseline(llm:answer/text)"):
        assert f"FAIL  {failed}" in out.stdout, out.stdout
    assert "PASS  errors.no_new" in out.stdout, out.stdout
    assert f"/#/run/{changed_run}/node/tool%3Asearch" in out.stdout or f"/#/run/{changed_run}/node/tool:search" in out.stdout, out.stdout
    suite, cases = junit(report)
    assert suite.get("failures") == "3" and suite.get("tests") == "4", ET.tostring(suite)
    assert cases["errors.no_new"] is None
    assert "tool call 2 differs" in (cases["tools.sequence"] or ""), cases

    # The result is stored with the run, through the server that holds the database.
    status, body = mindgate.request("GET", f"/api/annotations?runId={changed_run}&kind=check")
    assert status == 200
    checks = body["annotations"]
    assert len(checks) == 1 and checks[0]["check"]["passed"] is False, checks
    failed = sorted(r["name"] for r in checks[0]["check"]["rules"] if not r["passed"])
    assert failed == ["cost.max_increase_pct", "output.same_as_baseline(llm:answer/text)", "tools.sequence"], failed


def test_bad_input_is_a_usage_error(mindgate, tmp_path):
    run_id = run_agent(mindgate, "1")
    rules = tmp_path / "rules.toml"
    rules.write_text("[cost]\nmax_usd = 1\n")
    out = mindgate_cli(mindgate, "check", run_id, "--baseline", run_id, "--rules", str(rules))
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"{rules}:2: key `max_usd`" in out.stderr, out.stderr
    not_export = tmp_path / "notes.jsonl"
    not_export.write_text('{"hello": 1}\n')
    out = mindgate_cli(mindgate, "check", run_id, "--baseline", str(not_export))
    assert out.returncode == 2
    assert "is not a run export" in out.stderr, out.stderr
