"""The dashboard API fuzzed with schemathesis against a running ``robotd --sim`` (issue 17: fuzzed, not hoped).

Every operation in the OpenAPI description that robotd serves gets generated requests, valid and
invalid ones (schemathesis's positive and negative modes, derandomized: every run sends the same
requests), carrying the dashboard's header and Origin so that they reach the handlers. Every reply
must pass schemathesis's checks (``CHECKS``): no server error; a documented status code, content type,
body and headers; invalid input refused with a 4xx. Then the operations that change something are
fuzzed again without the header, and from another site's page: every reply must be the guard's 403,
and nothing may change. Both print their counts as one JSON line each:

    .venv/bin/python -m pytest -q -s tests/test_web_fuzz.py

schemathesis is imported only inside the fixtures: importing it patches Hypothesis for the whole
process (its failure reports then print no arguments), and pyproject.toml keeps its pytest plugin off
(``-p no:schemathesis``) for the same reason.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter

import pytest
import requests
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable

from test_robotd import serving

CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
    "negative_data_rejection",
)
# requests per operation and mode (valid, invalid) with the dashboard's header, and how many must go in all:
# the default run's sweep, and the exhaustive one (-m slow)
SWEEPS = [
    pytest.param(40, 800, id="40-per-mode"),
    pytest.param(80, 1000, id="80-per-mode", marks=pytest.mark.slow),
]
REFUSED = 15  # requests per operation that changes something, mode and way of lacking the header
CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
BUSY = frozenset({"scanning", "solving", "executing", "verifying"})
OTHER_SITE = "http://evil.example"


@pytest.fixture(scope="module")
def robotd(tmp_path_factory) -> str:
    with serving(tmp_path_factory.mktemp("fuzzed")) as url:
        yield url.rstrip("/")


@pytest.fixture(scope="module")
def schema(robotd):
    import schemathesis

    only = {"enabled": False, **{name: {"enabled": True} for name in CHECKS}}
    return schemathesis.openapi.from_url(
        f"{robotd}/openapi.json", config=schemathesis.Config.from_dict({"checks": only})
    )


@pytest.fixture(scope="module")
def modes():
    from schemathesis import GenerationMode

    return GenerationMode.POSITIVE, GenerationMode.NEGATIVE


class Fuzzer:
    """Sends schemathesis's cases to robotd with fixed headers, checks every reply and counts."""

    def __init__(self, base: str, headers: dict[str, str]):
        self.base, self.headers = base, headers
        self.session = requests.Session()
        self.sent: Counter[str] = Counter()
        self.statuses: Counter[int] = Counter()
        self.server_errors = 0
        self.schema_violations = 0  # replies under 500 that failed a check
        self.failures: list[str] = []  # one line per failed check: what failed, and the curl command
        self.started = time.perf_counter()

    def send(self, case) -> None:
        from schemathesis.errors import FailureGroup

        response = case.call(base_url=self.base, session=self.session, headers=self.headers, timeout=30)
        label = case.operation.label
        self.sent[label] += 1
        self.statuses[response.status_code] += 1
        self.server_errors += response.status_code >= 500
        try:
            case.validate_response(response, headers=self.headers)
        except FailureGroup as group:
            self.schema_violations += response.status_code < 500
            self.failures += [
                f"{failure.title} ({label}, {response.status_code}): {case.as_curl_command(headers=self.headers)}"
                for failure in group.exceptions
            ]
        if label == "POST /api/runs" and response.status_code == 201:
            self.stop()

    def stop(self) -> None:
        """Stop a run the fuzzer started, so that it does not keep the two cores busy for the rest."""
        self.session.post(f"{self.base}/api/stop", headers={"X-Robotd": "1"}, timeout=30).raise_for_status()

    def fuzz(self, strategy, examples: int) -> None:
        @settings(
            max_examples=examples,
            derandomize=True,
            database=None,
            deadline=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=strategy)
        def each(case) -> None:
            self.send(case)

        with contextlib.suppress(Unsatisfiable):  # nothing to make invalid: no parameters, or only free text
            each()

    def summary(self, part: str) -> dict:
        return {
            "part": part,
            "requests": sum(self.sent.values()),
            "server_errors": self.server_errors,
            "schema_violations": self.schema_violations,
            "statuses": dict(sorted(self.statuses.items())),
            "per_operation": dict(self.sent),
            "wall_s": round(time.perf_counter() - self.started, 1),
        }

    def report(self, limit: int = 20) -> str:
        return "\n".join(self.failures[:limit])


def operations(schema) -> list:
    return [result.ok() for result in schema.get_all_operations()]


def cameras(base: str) -> list[str]:
    return [camera["name"] for camera in requests.get(f"{base}/api/cameras", timeout=30).json()["cameras"]]


def generated(operation, mode, names: list[str]):
    """The cases of ``operation`` in ``mode``; a real camera's MJPEG stream never ends, so it is left to
    ``test_a_camera_stream_is_the_documented_mjpeg``."""
    strategy = operation.as_strategy(generation_mode=mode)
    if operation.path == "/stream/{name}":
        strategy = strategy.filter(lambda case: case.path_parameters.get("name") not in names)
    return strategy


def success_paths(schema, names: list[str]) -> list:
    """Requests that random data rarely makes, so that the 2xx replies are checked too: each camera's
    frame, a jog, the first run read back."""
    frame = schema["/api/cameras/{name}/frame.jpg"]["GET"]
    return [
        *(frame.Case(path_parameters={"name": name}) for name in names),
        schema["/api/jog"]["POST"].Case(body={"command": "R"}, media_type="application/json"),
        schema["/api/runs/{run_id}"]["GET"].Case(path_parameters={"run_id": 1}),
    ]


def wait_idle(base: str, seconds: float = 60) -> None:
    deadline = time.time() + seconds
    while requests.get(f"{base}/api/status", timeout=30).json()["phase"] in BUSY:
        assert time.time() < deadline, "the run the fuzzer started did not stop"
        time.sleep(0.05)


def observable_state(base: str) -> tuple:
    """What a request that got past the guard would change: the runs, the virtual cube, the calibration."""
    runs = requests.get(f"{base}/api/runs", params={"limit": 500}, timeout=30).json()["runs"]
    cube = requests.get(f"{base}/api/status", timeout=30).json()["simulation"]["cube"]
    return [run["id"] for run in runs], cube, requests.get(f"{base}/api/calibration", timeout=30).json()


@pytest.mark.timeout(300)  # the exhaustive sweep: about 70 s with starting robotd, on 2 shared cores
@pytest.mark.parametrize("examples, at_least", SWEEPS)
def test_every_operation_fuzzed_answers_without_server_errors_as_documented(robotd, schema, modes, examples, at_least):
    fuzzer = Fuzzer(robotd, {"X-Robotd": "1", "Origin": robotd})
    names = cameras(robotd)
    for operation in operations(schema):
        for mode in modes:
            fuzzer.fuzz(generated(operation, mode, names), examples)
    wait_idle(robotd)
    for case in success_paths(schema, names):
        fuzzer.send(case)
    summary = fuzzer.summary("with the dashboard's header")
    print(json.dumps(summary))
    assert summary["requests"] >= at_least
    assert set(summary["per_operation"]) == {operation.label for operation in operations(schema)}
    assert fuzzer.server_errors == 0 and fuzzer.failures == [], fuzzer.report()
    assert {200, 201} <= set(fuzzer.statuses)


def test_changes_without_the_dashboards_header_or_from_another_site_are_403(robotd, schema, modes):
    wait_idle(robotd)
    before = observable_state(robotd)
    fuzzer = Fuzzer(robotd, {})
    changing = [operation for operation in operations(schema) if operation.method.upper() in CHANGING]
    for headers in ({}, {"X-Robotd": "1", "Origin": OTHER_SITE}):
        fuzzer.headers = headers
        for operation in changing:
            for mode in modes:
                fuzzer.fuzz(operation.as_strategy(generation_mode=mode), REFUSED)
    print(json.dumps(fuzzer.summary("without the header, or from another site")))
    assert set(fuzzer.sent) == {operation.label for operation in changing}
    assert dict(fuzzer.statuses) == {403: sum(fuzzer.sent.values())}
    assert fuzzer.failures == [], fuzzer.report()
    assert observable_state(robotd) == before


def test_a_camera_stream_is_the_documented_mjpeg(robotd):
    described = requests.get(f"{robotd}/openapi.json", timeout=30).json()["paths"]["/stream/{name}"]["get"]
    with requests.get(f"{robotd}/stream/{cameras(robotd)[0]}", stream=True, timeout=30) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].partition(";")[0] in described["responses"]["200"]["content"]
        assert next(reply.iter_content(64)).startswith(b"--frame")
