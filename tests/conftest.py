from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import settings

# The suite's property tests draw the same examples on every run (CI must not turn red on a
# draw); HYPOTHESIS_PROFILE=slow or nightly asks for more examples, drawn afresh.
settings.register_profile("suite", derandomize=True, database=None)
if not os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile("suite")

ROOT = Path(__file__).resolve().parent.parent
PERFLAB = [sys.executable, "-m", "perflab"]


@pytest.fixture
def run_root(tmp_path: Path) -> str:
    return str(tmp_path / "runs")


def perflab(
    *args: str, cwd: Path | None = None, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess, as a user would (``env``: variables to add)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    return subprocess.run(
        [*PERFLAB, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env
    )


def perflab_json(*args: str, **kw) -> dict:
    proc = perflab(*args, "--json", **kw)
    assert proc.stdout.strip(), proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, "--json must print exactly one JSON object"
    return json.loads(lines[0])


def alive(pids_seen: list[list[float]]) -> list[int]:
    """The recorded processes that still exist (same pid *and* creation time)."""
    out = []
    for pid, created in pids_seen:
        try:
            p = psutil.Process(int(pid))
            if abs(p.create_time() - created) < 0.01 and p.status() != psutil.STATUS_ZOMBIE:
                out.append(int(pid))
        except psutil.Error:
            continue
    return out


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREENSHOTS = (
    Path(os.environ.get("PERFLAB_SCREENSHOTS", ""))
    if os.environ.get("PERFLAB_SCREENSHOTS")
    else None
)


def open_in_chromium(html: Path, screenshot: Path) -> dict:
    """Load the page from disk; report requests, console errors and broken images."""
    from playwright.sync_api import sync_playwright

    requests: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("request", lambda r: requests.append(r.url))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(html.as_uri(), wait_until="load")
        images = page.eval_on_selector_all(
            "figure img", "els => els.map(e => [e.complete, e.naturalWidth, e.alt])"
        )
        title = page.title()
        injected = page.eval_on_selector_all("h1 b", "els => els.length")
        page.screenshot(path=str(screenshot), full_page=False)
        browser.close()
    return {
        "requests": requests,
        "errors": errors,
        "images": images,
        "title": title,
        "injected": injected,
    }


@contextmanager
def ready_page(url: str, requests: list[str], errors: list[str]) -> Iterator[Any]:
    """A headless Chromium page (1280×900) loaded from ``url`` that says it drew itself
    (``body[data-ready]`` is "yes"): the loader of every page that draws with Vega (the
    report's interactive page, the atlas' site). Every request's URL goes into ``requests``,
    console errors and page errors into ``errors``; the browser is closed after."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda r: requests.append(r.url))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url)
            page.wait_for_selector("body[data-ready]", timeout=30_000)
            assert page.evaluate("document.body.dataset.ready") == "yes", errors
            yield page
        finally:
            browser.close()


#: A Parsl config for `--runner parsl`: where the measured runs go (not what they measure).
PARSL_RUNNER_CONFIG = """
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.providers import LocalProvider

# One worker per block, two blocks: on a cluster each block would be a node of its own.
config = Config(
    executors=[HighThroughputExecutor(
        label="perflab_runner", address="127.0.0.1", max_workers_per_node=1,
        provider=LocalProvider(init_blocks=2, min_blocks=2, max_blocks=2),
    )],
    # Parsl's default strategy_period (5 s): the runner launches init_blocks at load itself
    strategy="none",
)
"""


#: A black-box command for the tune tests: a and b help (x0.6, x0.8), c harms (x1.2), the
#: levels of p help a little; 2 % noise. Its last line is the score (us_per_task).
TUNE_APP = """
import os, random
t = set(filter(None, os.environ.get("PERFLAB_TREATMENTS", "").split(",")))
us = 1000.0 * (0.6 if "a" in t else 1) * (0.8 if "b" in t else 1) * (1.2 if "c" in t else 1)
us *= {"p=1": 0.95, "p=2": 0.9}.get(next((x for x in t if x.startswith("p=")), ""), 1)
print(us * random.lognormvariate(0, 0.02))
"""
