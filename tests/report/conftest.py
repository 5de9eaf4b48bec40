# SPDX-License-Identifier: BSD-3-Clause
"""A headless Chromium driven over the DevTools protocol (``--remote-debugging-pipe``).

No extra Python package is needed: Chromium reads NUL-terminated JSON commands on file
descriptor 3 and writes replies and events on descriptor 4. The browser is Debian's
``chromium`` package: ``make chromium`` installs it, as does ``make test`` when
``SYNTHRISK_REQUIRE_CHROMIUM=1`` (set by ``.ci/run``). Without it the browser test is
skipped locally with a note, and fails when ``SYNTHRISK_REQUIRE_CHROMIUM=1``, so it never
silently skips in CI.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ARTIFACTS = Path(
    os.environ.get(
        "SYNTHRISK_TEST_ARTIFACTS",
        Path(__file__).resolve().parents[2] / "test-artifacts",
    )
)


def chromium_path() -> str | None:
    for name in (
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ):
        found = shutil.which(name)
        if found:
            return found
    return None


class Page:
    """One browser tab: send commands, collect events."""

    def __init__(self, executable: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []
        self._buffer = b""
        self._next_id = 0
        self._profile = tempfile.mkdtemp(prefix="synthrisk-chromium-")
        import fcntl  # POSIX only, like Chromium's --remote-debugging-pipe

        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        # the child's ends go to descriptors >= 10 so that moving them onto 3 and 4 cannot clobber them
        low = (to_child_r, from_child_w)
        to_child_r, from_child_w = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in low)
        for fd in low:
            os.close(fd)
        flags = [
            "--headless", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
            "--no-default-browser-check", f"--user-data-dir={self._profile}", "--disable-background-networking",
            "--disable-component-update", "--disable-extensions", "--disable-sync", "--mute-audio",
            "--hide-scrollbars", "--disable-dev-shm-usage",
        ]  # fmt: skip
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            flags.append(
                "--no-sandbox"
            )  # Chromium refuses to run as root with its sandbox
        # a tiny Python trampoline moves the pipe ends onto descriptors 3 and 4, where
        # Chromium expects them, then becomes Chromium (no preexec_fn: not fork-safe)
        trampoline = (
            "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
            "os.close(int(sys.argv[1])); os.close(int(sys.argv[2])); os.execv(sys.argv[3], sys.argv[3:])"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", trampoline, str(to_child_r), str(from_child_w), executable, *flags, "about:blank"],
            pass_fds=(to_child_r, from_child_w),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(to_child_r)
        os.close(from_child_w)
        self._write, self._read = to_child_w, from_child_r
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call(
            "Target.attachToTarget", {"targetId": target, "flatten": True}
        )["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                msg = "Chromium did not answer in time"
                raise TimeoutError(msg)
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    msg = "Chromium closed the DevTools pipe"
                    raise EOFError(msg)
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(line)  # type: ignore[no-any-return]

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: str | None = None,
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {
            "id": self._next_id,
            "method": method,
            "params": params or {},
        }
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    msg = f"{method}: {reply['error']}"
                    raise RuntimeError(msg)
                return reply.get("result", {})  # type: ignore[no-any-return]
            self.events.append(reply)

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A command to the page's session."""
        return self.call(method, params, session=self.session)

    def wait_for(self, event: str) -> dict[str, Any]:
        for seen in self.events:
            if seen.get("method") == event:
                return seen
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._receive(deadline)
            self.events.append(message)
            if message.get("method") == event:
                return message

    def open(self, url: str) -> None:
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}
        )
        if "exceptionDetails" in result:
            raise RuntimeError(str(result["exceptionDetails"]))
        return result["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        shot = self.send(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def pdf(self, path: Path) -> Path:
        printed = self.send(
            "Page.printToPDF", {"printBackground": True, "preferCSSPageSize": True}
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(printed["data"]))
        return path

    def close(self) -> None:
        with contextlib.suppress(OSError, EOFError, TimeoutError, RuntimeError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._write, self._read):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)


@pytest.fixture
def artifacts() -> Path:
    """Folder for test artefacts (screenshots, PDFs): ``test-artifacts/`` or ``$SYNTHRISK_TEST_ARTIFACTS``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def browser_page() -> Iterator[Page]:
    executable = chromium_path()
    if executable is None:
        reason = (
            "headless Chromium is not installed (`make chromium` installs Debian's chromium as root; "
            "or install your system's chromium package)"
        )
        if os.environ.get("SYNTHRISK_REQUIRE_CHROMIUM") == "1":
            pytest.fail(f"SYNTHRISK_REQUIRE_CHROMIUM=1 but {reason}")
        pytest.skip(reason)
    page = Page(executable)
    try:
        yield page
    finally:
        page.close()
