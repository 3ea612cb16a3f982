"""Many pages in one headless Chromium, driven over the DevTools protocol on a pipe.

A Chromium launch costs about 1.6 CPU-s; the book has ~70 pages, so one launch per page was
the suite's second-largest item.  Here one browser opens each page in a fresh tab, waits for its
load event and then 3 s of virtual time (``--virtual-time-budget=3000`` gave 3 s from the start),
and reports what went wrong:
uncaught exceptions, console errors and assertions, error log entries (a resource that failed
to load) and failed network requests, and whether the DOM it built ends in ``</html>``.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import time

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# console text the per-launch check flagged in Chromium's log (kept: console.log("... Error ...") still fails)
CONSOLE_ERROR = re.compile(r"Uncaught|Error|ERR_|Failed to load", re.I)


class Chromium:
    """One headless Chromium; ``problems(path)`` loads a page and lists what failed on it."""

    def __init__(self, profile, timeout=120.0):
        self.timeout = timeout
        # bash, not sh: dash redirects single-digit descriptors only
        r_cmd, w_cmd = os.pipe()  # we write commands, Chromium reads them on fd 3
        r_evt, w_evt = os.pipe()  # Chromium writes replies and events on fd 4
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"]
        self.proc = subprocess.Popen(["bash", "-c", f'exec "$0" "$@" 3<&{r_cmd} 4>&{w_evt}', CHROMIUM, *args],
                                     pass_fds=(r_cmd, w_evt), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(r_cmd)
        os.close(w_evt)
        self._w, self._r = w_cmd, r_evt
        self._buf, self._id, self._events = b"", 0, []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self._send("Browser.close")
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)

    def _send(self, method, session=None, **params):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        return self._id

    def _next(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                raise TimeoutError("headless Chromium did not answer in time")
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                raise RuntimeError(f"headless Chromium exited (rc {self.proc.poll()})")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method, session=None, **params):
        """Send a command and return its result; events that arrive meanwhile are kept."""
        want, deadline = self._send(method, session, **params), time.monotonic() + self.timeout
        while True:
            msg = self._next(deadline)
            if msg.get("id") == want:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._events.append(msg)

    def _wait_event(self, method, session):
        deadline = time.monotonic() + self.timeout
        while True:
            for i, e in enumerate(self._events):
                if e.get("method") == method and e.get("sessionId") == session:
                    return self._events.pop(i)
            self._events.append(self._next(deadline))

    def problems(self, path, budget_ms=3000):
        """Open ``path`` in a fresh tab for ``budget_ms`` of virtual time; return its problems (empty: clean)."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        s = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(f"{domain}.enable", s)
        nav = self.call("Page.navigate", s, url=path.as_uri())
        found = [f"navigation failed: {nav['errorText']}"] if nav.get("errorText") else []
        if not found:  # loaded, then its timers run for budget_ms of virtual time
            self._wait_event("Page.loadEventFired", s)
            self.call("Emulation.setVirtualTimePolicy", s, policy="pauseIfNetworkFetchesPending", budget=budget_ms)
            self._wait_event("Emulation.virtualTimeBudgetExpired", s)
            dom = self.call("Runtime.evaluate", s, expression="document.documentElement.outerHTML", returnByValue=True)
            if "</html>" not in str(dom.get("result", {}).get("value", "")):
                found.append("no DOM")
        self.call("Target.closeTarget", targetId=target)
        mine = [e for e in self._events if e.get("sessionId") == s]
        self._events = [e for e in self._events if e.get("sessionId") != s]
        for e in mine:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                found.append("uncaught: " + d.get("exception", {}).get("description", d.get("text", "")))
            elif m == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                if p.get("type") in ("error", "assert") or CONSOLE_ERROR.search(text):
                    found.append(f"console.{p.get('type')}: {text}")
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                found.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif m == "Network.loadingFailed" and not p.get("canceled"):
                found.append(f"load failed: {p.get('errorText')} ({p.get('type')})")
        return found

    def evaluate(self, path, expression, width=1200, height=900, budget_ms=3000):
        """Open ``path`` in a fresh tab whose viewport is ``width`` x ``height`` CSS pixels, let it run for
        ``budget_ms`` of virtual time, then return the JSON value of the JavaScript ``expression`` (a promise is
        awaited: an ``async`` arrow function called in place can wait for MathJax)."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        s = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        try:
            self.call("Page.enable", s)
            self.call("Emulation.setDeviceMetricsOverride", s, width=width, height=height, deviceScaleFactor=1, mobile=False)
            nav = self.call("Page.navigate", s, url=path.as_uri())
            if nav.get("errorText"):
                raise RuntimeError(f"{path}: navigation failed: {nav['errorText']}")
            self._wait_event("Page.loadEventFired", s)
            self.call("Emulation.setVirtualTimePolicy", s, policy="pauseIfNetworkFetchesPending", budget=budget_ms)
            self._wait_event("Emulation.virtualTimeBudgetExpired", s)
            # virtual time is paused after the budget: let real time run so that awaited promises can settle
            self.call("Emulation.setVirtualTimePolicy", s, policy="advance")
            res = self.call("Runtime.evaluate", s, expression=expression, returnByValue=True, awaitPromise=True)
            if "exceptionDetails" in res:
                raise RuntimeError(f"{path}: {res['exceptionDetails']}")
            return res.get("result", {}).get("value")
        finally:
            self.call("Target.closeTarget", targetId=target)
            self._events = [e for e in self._events if e.get("sessionId") != s]
