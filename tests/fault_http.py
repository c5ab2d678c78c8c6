"""A fault-injecting HTTP server on 127.0.0.1 for the HTTP client and reader tests.

It speaks raw sockets, so it can misbehave in ways a real HTTP server library
would not let it: each connection reads one request, records it (path, headers,
body), then plays the next *fault* of its script (the default when the script is
empty: a well-formed chat-completions answer).  Every loop is bounded (drips
stop after ``DRIP_MAX`` bytes or when the client goes away; stalls after
``STALL_MAX`` seconds) and every socket has a timeout, so a broken client test
cannot hang the server, and the server cannot outlive its test.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Self

DRIP_MAX = 60  # bytes
STALL_MAX = 20.0  # seconds

FAULTS = (
    "ok",  # a well-formed 200 chat-completions answer
    "status",  # an HTTP error status with a JSON error body; headers via `headers=`
    "drip_body",  # status and headers at once, then the body one byte every `interval` s
    "drip_head",  # the status line itself one byte every `interval` s
    "short_body",  # Content-Length larger than the body, then close
    "non_utf8",  # 200 with a body that is not UTF-8
    "non_json",  # 200 with a UTF-8 body that is not JSON
    "broken_status",  # a status line that is not HTTP
    "redirect",  # a 3xx with Location: `location`
    "reset",  # read the request, then close with RST
    "close",  # read the request, then close without a byte
    "stall",  # read the request, never answer (until the client goes away)
    "big",  # 200 with a JSON body of `size` bytes
    "raw",  # whatever bytes `data` holds, then close
)


def chat_answer(content: str = "echo [1].", prompt_tokens: int = 321) -> bytes:
    return json.dumps(
        {
            "choices": [{"message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 3},
        }
    ).encode()


def _response(status: int, body: bytes, headers: dict | None = None, reason: str = "X") -> bytes:
    head = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json", f"Content-Length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    head.append("Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class FaultServer:
    """``script``: a list of ``(fault, options)``; each connection plays the next one (``ok`` when empty).

    ``responder``: when set and the script is empty, called with each request (its decoded JSON body) and
    answered 200 with the bytes it returns (a scripted model that reads its prompt).
    """

    def __init__(self):
        self.script: list[tuple[str, dict]] = []
        self.requests: list[dict] = []
        self.responder = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(32)
        self.sock.settimeout(0.05)
        self.port = self.sock.getsockname()[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.origin}/v1"
        self._threads: list[threading.Thread] = []
        self._accept = threading.Thread(target=self._serve, daemon=True)
        self._accept.start()

    # -- scripting ---------------------------------------------------------------------
    def play(self, *faults) -> FaultServer:
        """Append faults: a name, or ``(name, {options})``."""
        with self._lock:
            for f in faults:
                self.script.append((f, {}) if isinstance(f, str) else (f[0], dict(f[1])))
        return self

    def _next(self) -> tuple[str, dict]:
        with self._lock:
            return self.script.pop(0) if self.script else ("ok", {})

    # -- serving -----------------------------------------------------------------------
    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            t = threading.Thread(target=self._handle, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _read_request(self, conn: socket.socket) -> dict | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
            if len(data) > 1 << 20:
                return None
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0"))
        while len(rest) < n:
            chunk = conn.recv(65536)
            if not chunk:
                break
            rest += chunk
        try:
            body = json.loads(rest[:n]) if n else None
        except ValueError:
            body = rest[:n]
        return {"method": method, "path": path, "headers": headers, "body": body, "t": time.monotonic()}

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        try:
            req = self._read_request(conn)
            if req is None:
                return
            with self._lock:
                self.requests.append(req)
            with self._lock:
                dynamic = self.responder if not self.script else None
            if dynamic is not None:
                conn.sendall(_response(200, dynamic(req["body"])))
                return
            fault, opt = self._next()
            getattr(self, f"_do_{fault}")(conn, opt)
        except OSError:
            pass  # the client went away: exactly what some faults provoke
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def _drip(self, conn: socket.socket, data: bytes, interval: float) -> None:
        for i in range(min(len(data), DRIP_MAX)):
            if self._stop.is_set():
                return
            conn.sendall(data[i : i + 1])
            time.sleep(interval)

    def _do_ok(self, conn, opt):
        conn.sendall(_response(200, opt.get("body", chat_answer(opt.get("content", "echo [1].")))))

    def _do_status(self, conn, opt):
        body = json.dumps({"error": {"message": opt.get("message", "failure")}}).encode()
        conn.sendall(_response(opt.get("code", 500), body, opt.get("headers")))

    def _do_drip_body(self, conn, opt):
        body = chat_answer()
        conn.sendall(_response(200, b"", {}).replace(b"Content-Length: 0", f"Content-Length: {len(body)}".encode()))
        self._drip(conn, body, opt.get("interval", 0.8))

    def _do_drip_head(self, conn, opt):
        self._drip(conn, _response(200, chat_answer()), opt.get("interval", 0.8))

    def _do_short_body(self, conn, opt):
        body = chat_answer()
        full = _response(200, body)
        conn.sendall(
            full.replace(f"Content-Length: {len(body)}".encode(), f"Content-Length: {len(body) + 50}".encode())
        )

    def _do_non_utf8(self, conn, opt):
        conn.sendall(_response(200, b'{"choices": [{"message": {"content": "caf\xe9 \xff\xfe [1]"}}]}'))

    def _do_non_json(self, conn, opt):
        conn.sendall(_response(200, b"<html>upstream proxy page</html>"))

    def _do_broken_status(self, conn, opt):
        conn.sendall(opt.get("line", b"HTTP/1.1 OK-ish\r\nContent-Length: 2\r\n\r\n{}"))

    def _do_redirect(self, conn, opt):
        conn.sendall(_response(opt.get("code", 302), b"", {"Location": opt["location"]}))

    def _do_reset(self, conn, opt):
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    def _do_close(self, conn, opt):
        pass

    def _do_stall(self, conn, opt):
        conn.settimeout(0.1)
        end = time.monotonic() + STALL_MAX
        while time.monotonic() < end and not self._stop.is_set():
            try:
                if conn.recv(1) == b"":
                    return  # the client closed: stop waiting
            except TimeoutError:
                continue

    def _do_big(self, conn, opt):
        pad = "x" * opt.get("size", 1 << 20)
        conn.sendall(_response(200, json.dumps({"pad": pad}).encode()))

    def _do_raw(self, conn, opt):
        conn.sendall(opt["data"])

    # -- lifecycle ---------------------------------------------------------------------
    def close(self) -> None:
        self._stop.set()
        self._accept.join(timeout=2)
        self.sock.close()
        for t in self._threads:
            t.join(timeout=2)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
