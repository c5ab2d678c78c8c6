"""Reader throughput against local replicas: requests/s by concurrency and by number of endpoints, in one run.

    python bench/bench_readers.py                     # default: slots 8, latency 0.1 s, 3 repeats, ~1 min
    python bench/bench_readers.py --slots 4 --repeats 5

Each endpoint is a local chat-completions server on 127.0.0.1 (an asyncio server in its own process, so it
does not compete with the reader for this interpreter) that behaves like one model replica with a fixed capacity: it serves at most ``--slots`` requests at a time, each taking ``--latency`` seconds (100 ms by
default); requests beyond that wait in the server's queue, as a vLLM replica queues past its batch.  So one
endpoint's capacity is ``slots / latency`` requests/s (80/s by default) and two endpoints' is twice that.

For 1 and 2 endpoints and reader concurrency 1, 4, 16 and 64 (``concurrency``: requests in flight in all,
spread over the endpoints), the ``openai`` reader answers ``max(16, 4 x concurrency)`` requests; the table
gives the median requests/s over ``--repeats`` runs, the speed-up over concurrency 1 on one endpoint (the
baseline, measured in the same run), the ideal ``min(concurrency, slots x endpoints) / latency`` and the
fraction of it reached, and the speed-up of 2 endpoints over 1 at each concurrency.  Every configuration's
answers are checked against concurrency 1 on one endpoint (same texts, same order).  A last line compares the
HTTP client's connections split into lanes (several small httpx pools, the default) with one httpx pool of 64
connections, at concurrency 64 against an endpoint of 64 slots.  Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import urllib.request

from _threads import load_line, pin_blas_threads

import rageval.http.client
from rageval.readers import ReaderRequest, get_reader
from rageval.readers.openai_compat import OpenAIReader
from rageval.types import Unit

CONCURRENCY = (1, 4, 16, 64)


# One replica: an asyncio HTTP/1.1 server (keep-alive) in its own process, so that the server's work does not
# share the benchmark's interpreter.  POST: wait for one of `slots` slots, hold it `latency` seconds, answer;
# GET: its counters.  It prints its port, then serves until its stdin closes.
_SERVER = r"""
import asyncio, json, re, sys
slots, latency = int(sys.argv[1]), float(sys.argv[2])
state = {"in_flight": 0, "max_in_flight": 0, "served": 0}

async def handle(reader, writer):
    try:
        while True:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            method = head[0].split(" ", 1)[0]
            size = 0
            for line in head[1:]:
                key, _, value = line.partition(":")
                if key.strip().lower() == "content-length":
                    size = int(value)
            body = await reader.readexactly(size) if size else b""
            if method == "GET":
                raw = json.dumps(state).encode()
            else:
                qid = re.search(rb"Q(\d+):", body).group(1).decode()
                async with gate:
                    state["in_flight"] += 1
                    state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
                    await asyncio.sleep(latency)
                    state["in_flight"] -= 1
                state["served"] += 1
                answer = {"choices": [{"message": {"content": f"Answer to Q{qid} [1]."}}], "usage": {"prompt_tokens": 50}}
                raw = json.dumps(answer).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(raw) + raw)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()

async def main():
    global gate
    gate = asyncio.Semaphore(slots)
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

asyncio.run(main())
"""


class Replica:
    """A chat server process with ``slots`` slots, each request holding one for ``latency`` seconds."""

    def __init__(self, slots: int, latency: float):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER, str(slots), str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        port = int(self.proc.stdout.readline())  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}/v1"

    def counters(self) -> dict:
        with urllib.request.urlopen(f"{self.url}/stats", timeout=10) as resp:
            return json.loads(resp.read())

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _requests(n: int) -> list[ReaderRequest]:
    units = (Unit("Paris is the capital and largest city of France.", title="Paris"),)
    return [ReaderRequest(f"q{i}", f"Q{i}: what is the capital of France?", units) for i in range(n)]


def _rate(urls: list[str], concurrency: int, n: int, *, lane: int | None = None) -> tuple[float, list[str]]:
    saved = rageval.http.client._LANE_CONNECTIONS
    if lane is not None:  # the connections per httpx pool, for the comparison with one pool
        rageval.http.client._LANE_CONNECTIONS = lane
    reader = get_reader("openai", model="replica", base_url=urls, concurrency=concurrency, timeout=30, max_retries=0)
    assert isinstance(reader, OpenAIReader)  # for close()
    try:
        reader.generate(_requests(concurrency))  # warm-up: open the connections
        reqs = _requests(n)
        t0 = time.perf_counter()
        out = reader.generate(reqs)
        dt = time.perf_counter() - t0
    finally:
        reader.close()
        rageval.http.client._LANE_CONNECTIONS = saved
    bad = [o for o in out if o.status != "ok"]
    if bad:
        raise SystemExit(f"{len(bad)} of {n} requests failed, e.g. {bad[0].error}")
    return n / dt, [o.text for o in out]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--slots", type=int, default=8, help="requests one endpoint serves at a time (default 8)")
    ap.add_argument("--latency", type=float, default=0.1, help="seconds one request holds a slot (default 0.1)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per configuration; the median is shown")
    args = ap.parse_args()
    print(load_line())

    print(f"# {pin_blas_threads(1)}")
    replicas = [Replica(args.slots, args.latency), Replica(args.slots, args.latency)]
    wide = Replica(64, args.latency)
    configs = [(e, c) for e in (1, 2) for c in CONCURRENCY]
    rates: dict[tuple[int, int], list[float]] = {k: [] for k in configs}
    _, reference = _rate([replicas[0].url], 1, max(16, 4 * max(CONCURRENCY)))
    same = True
    pools: dict[str, list[float]] = {"lanes": [], "one": []}
    for _ in range(args.repeats):
        for e, c in configs:  # interleaved, so a busy spell on the machine touches every row alike
            n = max(16, 4 * c)
            rate, texts = _rate([r.url for r in replicas[:e]], c, n)
            rates[(e, c)].append(rate)
            same &= texts == reference[:n]
        for name, lane in (("lanes", None), ("one", 10**6)):  # concurrency 64, one endpoint of 64 slots
            pools[name].append(_rate([wide.url], 64, 256, lane=lane)[0])
    held = max(r.counters()["max_in_flight"] for r in replicas)
    for r in (*replicas, wide):
        r.close()
    med = {k: statistics.median(v) for k, v in rates.items()}
    base = med[(1, 1)]
    cap = args.slots / args.latency
    print(
        f"# openai reader, local replicas: {args.slots} slots x {args.latency * 1000:.0f} ms each "
        f"(capacity {cap:.0f} requests/s per endpoint); median of {args.repeats} runs; "
        f"max(16, 4 x concurrency) requests per run"
    )
    print("| endpoints | concurrency | requests/s | vs concurrency 1, 1 endpoint | ideal requests/s | reached |")
    print("|---|---|---|---|---|---|")
    for e, c in configs:
        ideal = min(c, args.slots * e) / args.latency
        print(
            f"| {e} | {c} | {med[(e, c)]:.1f} | {med[(e, c)] / base:.2f}x | {ideal:.0f} | {med[(e, c)] / ideal:.2f} |"
        )
    print()
    print("| concurrency | 2 endpoints / 1 endpoint | ideal |")
    print("|---|---|---|")
    for c in CONCURRENCY:
        ideal = min(c, 2 * args.slots) / min(c, args.slots)
        print(f"| {c} | {med[(2, c)] / med[(1, c)]:.2f}x | {ideal:.2f}x |")
    print()
    lanes, one = statistics.median(pools["lanes"]), statistics.median(pools["one"])
    print(
        f"HTTP client at concurrency 64 against one endpoint of 64 slots (ideal {64 / args.latency:.0f}/s): "
        f"connections in lanes of {rageval.http.client._LANE_CONNECTIONS} {lanes:.1f} requests/s, one httpx pool of 64 "
        f"{one:.1f} requests/s ({lanes / one:.2f}x)"
    )
    print(f"most requests one replica served at once: {held} (slots: {args.slots})")
    print(f"answers identical to concurrency 1 on one endpoint, in request order: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    from _results import run_and_save  # beside this script: the run goes to bench/results/<script>.json

    run_and_save(__file__, main)
