"""A page as a reader sees it: a real headless Chromium, driven over the Chrome DevTools protocol.

:func:`inspect` opens an HTML file in a fresh headless browser (its own profile, no network
services, no sandbox: the flags of :data:`FLAGS`) at a desktop width, and reports what a reader
would meet: errors in the console (messages, uncaught exceptions, resources that failed),
images that did not load, tables wider than the page, and a screenshot of the whole page.

Tests call :func:`require` first: without a browser or the ``websocket-client`` package it skips
the test with one line saying what to install.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

#: Executables tried, in order, when MLCB_BROWSER does not name one.
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: A quiet headless browser: no sandbox (CI runs as root), no GPU, no background network traffic,
#: no updates, no sync, no first-run pages.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--remote-debugging-port=0",
)
#: The reader's window.
WIDTH, HEIGHT = 1280, 900
#: Seconds to wait for the browser to start and for a page to load.
TIMEOUT = 30.0

#: What a page reports about itself once loaded: the width it has, its images and its tables.
_PROBE = """(() => {
  const width = document.documentElement.clientWidth;
  const images = [...document.images].map(i => ({alt: i.alt, loaded: i.complete && i.naturalWidth > 0}));
  const tables = [...document.querySelectorAll('table')].map((t, index) => {
    let title = t.previousElementSibling;
    while (title && !/^H[1-6]$/.test(title.tagName)) title = title.previousElementSibling;
    return {index, title: title ? title.textContent : '', right: t.getBoundingClientRect().right};
  });
  return {width, scrollWidth: document.documentElement.scrollWidth, images, tables,
          title: document.title};
})()"""


def executable() -> str | None:
    """The browser to run: ``MLCB_BROWSER``, else the first of :data:`CANDIDATES` on the path."""
    named = os.environ.get("MLCB_BROWSER")
    if named:
        return shutil.which(named)
    return next((path for path in map(shutil.which, CANDIDATES) if path), None)


def require() -> str:
    """The browser's path; skips the calling test, in one line, when it or websocket-client is missing."""
    path = executable()
    if path is None:
        pytest.skip("no headless browser installed (apt-get install chromium, or set MLCB_BROWSER)")
    try:
        import websocket  # noqa: F401
    except ImportError:
        pytest.skip("websocket-client is not installed (pip install websocket-client)")
    return path


@dataclass
class Seen:
    """What :func:`inspect` saw of one page."""

    title: str
    width: int
    scroll_width: int
    errors: list[str] = field(default_factory=list)
    missing_images: list[str] = field(default_factory=list)
    overflowing_tables: list[str] = field(default_factory=list)
    images: int = 0
    tables: int = 0
    screenshot: Path | None = None

    def problems(self) -> list[str]:
        """Everything a reader would notice, one line each (empty for a sound page)."""
        lines = [f"console: {e}" for e in self.errors]
        lines += [f"image not loaded: {name}" for name in self.missing_images]
        lines += [f"table wider than the page ({self.width} px): {t}" for t in self.overflowing_tables]
        if self.scroll_width > self.width:
            lines.append(
                f"the page scrolls sideways: {self.scroll_width} px wide in a {self.width} px window"
            )
        return lines


class _DevTools:
    """A minimal client of the Chrome DevTools protocol over one websocket (flat sessions)."""

    def __init__(self, url: str) -> None:
        import websocket

        self.socket = websocket.create_connection(url, timeout=TIMEOUT, suppress_origin=True)
        self.counter = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self.counter += 1
        message: dict[str, Any] = {"id": self.counter, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while True:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == self.counter:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            self.events.append(reply)

    def wait(self, method: str, session: str) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        seen = 0
        while True:
            for event in self.events[seen:]:
                if event.get("method") == method and event.get("sessionId") == session:
                    return event
            seen = len(self.events)
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {method} within {TIMEOUT:g} s")
            self.events.append(json.loads(self.socket.recv()))

    def close(self) -> None:
        self.socket.close()


def _errors(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            out.append(
                " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            )
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            out.append(details.get("exception", {}).get("description") or details.get("text", "exception"))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            out.append(f"{entry.get('text', '')} {entry.get('url', '')}".strip())
    return out


def _start(path: str, profile: Path) -> tuple[subprocess.Popen, str]:
    """Start the browser on a fresh profile; the process and its DevTools websocket address."""
    process = subprocess.Popen(
        [path, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: _stop ends the browser's helpers too
    )
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{path} exited with status {process.returncode} before it listened")
        lines = port_file.read_text().split() if port_file.is_file() else []
        if len(lines) >= 2:
            return process, f"ws://127.0.0.1:{lines[0]}{lines[1]}"
        time.sleep(0.05)
    _stop(process)
    raise TimeoutError(f"{path} did not open its DevTools port within {TIMEOUT:g} s")


def _stop(process: subprocess.Popen) -> None:
    """End the browser and every process of its group (renderers, zygote, crash handler)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=TIMEOUT)


def inspect(page: Path, screenshot: Path) -> Seen:
    """Open ``page`` (an HTML file) in a fresh headless browser at :data:`WIDTH` x :data:`HEIGHT`
    CSS pixels, wait for it to load, and report what a reader meets; the whole page is saved as a
    PNG at ``screenshot`` (at half scale)."""
    path = require()
    # Helpers of a killed browser may still write to the profile for a moment: never fail on its removal.
    with tempfile.TemporaryDirectory(prefix="mlcb-browser-", ignore_cleanup_errors=True) as profile:
        process, url = _start(path, Path(profile))
        tools = None
        try:
            tools = _DevTools(url)
            target = tools.call("Target.createTarget", url="about:blank")["targetId"]
            session = tools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                tools.call(f"{domain}.enable", session)
            tools.call(
                "Emulation.setDeviceMetricsOverride",
                session,
                width=WIDTH,
                height=HEIGHT,
                deviceScaleFactor=1,
                mobile=False,
            )
            start = len(tools.events)
            tools.call("Page.navigate", session, url=page.resolve().as_uri())
            tools.wait("Page.loadEventFired", session)
            probe = tools.call("Runtime.evaluate", session, expression=_PROBE, returnByValue=True)
            found = probe["result"]["value"]
            metrics = tools.call("Page.getLayoutMetrics", session)["cssContentSize"]
            shot = tools.call(
                "Page.captureScreenshot",
                session,
                format="png",
                captureBeyondViewport=True,
                clip={"x": 0, "y": 0, "width": metrics["width"], "height": metrics["height"], "scale": 0.5},
            )
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            screenshot.write_bytes(base64.b64decode(shot["data"]))
            errors = _errors(tools.events[start:])
        finally:
            if tools is not None:
                try:
                    tools.call("Browser.close")  # a clean exit: nothing left writing to the profile
                except Exception:  # noqa: BLE001 - the browser is ended below whatever happened
                    pass
                tools.close()
            _stop(process)
    width = int(found["width"])
    return Seen(
        title=str(found["title"]),
        width=width,
        scroll_width=int(found["scrollWidth"]),
        errors=errors,
        missing_images=[i["alt"] for i in found["images"] if not i["loaded"]],
        overflowing_tables=[
            f"table {t['index']} ({t['title'].strip() or 'untitled'}), right edge at {t['right']:.0f} px"
            for t in found["tables"]
            if t["right"] > width + 0.5
        ],
        images=len(found["images"]),
        tables=len(found["tables"]),
        screenshot=screenshot,
    )


def screenshots(tmp_path: Path) -> Path:
    """Where a test saves its screenshots: ``MLCB_SCREENSHOTS`` when set (to keep and look at
    them), else the test's temporary directory."""
    kept = os.environ.get("MLCB_SCREENSHOTS")
    return Path(kept) if kept else tmp_path
