"""HTTP client benchmark: ratios in one run, on this machine, against local servers on 127.0.0.1.

    python bench/bench_http.py                 # default: 400 requests, concurrency 4, ~15 s on 2 cores
    python bench/bench_http.py --requests 2000 --concurrency 8

Prints, for the same chat-completions server (``http.server``, threaded) and the same payloads:

1. requests/s of a plain ``urllib.request`` POST loop (the reader's HTTP before
   ``rageval.http``) vs :class:`rageval.http.HttpClient` (one client, kept-alive
   connections, its own event-loop thread) — sequential and at ``--concurrency``
   threads — and the ratio client / urllib;
2. the deadline: seconds until a request with ``timeout=1`` gives up against a
   server that sends its body one byte every 0.8 s (``--drip-bytes`` bytes, so the
   urllib figure is bounded by the drip's length, not by its timeout).

Nothing is downloaded; both servers are started and stopped here.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from _threads import load_line  # beside this script

from rageval.http import HttpClient, HttpError

ANSWER = json.dumps(
    {"choices": [{"message": {"role": "assistant", "content": "Paris [1]."}}], "usage": {"prompt_tokens": 300}}
).encode()


class _Chat(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as vLLM and TGI serve

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as uvicorn does

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)

    def log_message(self, *args):
        pass


def _drip_server(interval: float, n_bytes: int) -> tuple[socket.socket, threading.Event]:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.1)
    stop = threading.Event()

    def handle(conn):
        with conn:
            conn.settimeout(5)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            body = b"x" * n_bytes
            try:
                conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode())
                for i in range(n_bytes):
                    if stop.is_set():
                        return
                    conn.sendall(body[i : i + 1])
                    time.sleep(interval)
            except OSError:
                return

    def serve():
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return sock, stop


def _payload(i: int) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": f"Question {i}: " + "context " * 200}]}


def _urllib_post(url: str, payload: dict, timeout: float) -> dict:
    req = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def _rate(fn, n: int, concurrency: int) -> float:
    t0 = time.perf_counter()
    if concurrency == 1:
        for i in range(n):
            fn(i)
    else:
        with ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(fn, range(n)))
    return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--drip-bytes", type=int, default=6, help="bytes the drip server sends (0.8 s apart)")
    args = ap.parse_args()
    print(load_line())

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Chat)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    url = f"{base}/chat/completions"

    print(f"# HTTP client benchmark: {args.requests} requests per row, local chat server, payload ~1.6 kB")
    print("| path | concurrency | urllib req/s | HttpClient req/s | client / urllib |")
    print("|---|---|---|---|---|")
    for conc in (1, args.concurrency):
        _rate(lambda i: _urllib_post(url, _payload(i), 10), 20, conc)  # warm-up
        u = _rate(lambda i: _urllib_post(url, _payload(i), 10), args.requests, conc)
        with HttpClient(base, timeout=10, max_connections=conc) as client:
            _rate(lambda i: client.post_json("chat/completions", _payload(i)), 20, conc)
            h = _rate(lambda i: client.post_json("chat/completions", _payload(i)), args.requests, conc)
        print(f"| chat completion | {conc} | {u:.0f} | {h:.0f} | {h / u:.2f} |")
    httpd.shutdown()
    httpd.server_close()

    sock, stop = _drip_server(0.8, args.drip_bytes)
    drip = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    t0 = time.perf_counter()
    try:
        _urllib_post(f"{drip}/chat/completions", {}, 1.0)
        u_out = "answered"
    except Exception as err:  # noqa: BLE001 - any ending counts; the figure is the time
        u_out = type(err).__name__
    u_t = time.perf_counter() - t0
    with HttpClient(drip, timeout=1.0, max_retries=0) as client:
        t0 = time.perf_counter()
        try:
            client.post_json("chat/completions", {})
            h_out = "answered"
        except HttpError as err:
            h_out = f"HttpError({err.kind})"
        h_t = time.perf_counter() - t0
    stop.set()
    sock.close()
    print()
    print(f"# deadline: timeout=1, server drips {args.drip_bytes} bytes 0.8 s apart")
    print("| client | seconds until it returned | how |")
    print("|---|---|---|")
    print(f"| urllib (per-read timeout) | {u_t:.2f} | {u_out} |")
    print(f"| HttpClient (total deadline) | {h_t:.2f} | {h_out} |")


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
