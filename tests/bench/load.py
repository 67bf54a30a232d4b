#!/usr/bin/env python3
"""`make bench`, second part: writes under load, as docs/reliability.md reports them.

- **Load**: N clients over `--http` append unique lines to a few pads for a stated time while
  people type (the test server's `steady` person: a letter every 200 ms, each acknowledged
  before the next, reading everything meanwhile, joining again when dropped). Reported: calls
  served and p50/p99 in the first and the last 10 s, failed calls by kind, lost and doubled
  lines (read back from the pads), people's disconnections, and the server's peak RSS.
- The same with the fault suite's proxy cutting a share of connections between an edit and its
  acknowledgement: every call must say landed or not written, and the pad must agree.
- **A long pad over a slow link**: an append on a pad of 100,000 entries and on a small one,
  over a userspace link of 50 Mbit/s and 20 ms each way, one call after another (warm).

Run alone: `python3 tests/bench/load.py [--seconds S] [--clients N]`; figures go to
target/bench/load.json. `--upstream BIN` runs the two load runs against upstream Rustpad's own
server instead (it listens on every address: run it in a network namespace of its own, such as
`unshare -n sh -c 'ip link set lo up && python3 tests/bench/load.py --upstream …'`).

Why this file is long: the three runs share one driver, proxy and reading of the pads, and what
each party's CPU says about a run (the ceiling a server whose cost did not grow would reach) is
worked out beside the figures it reads, so that every figure in docs/reliability.md comes from one
place.
"""

import argparse
import asyncio
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from bench import OUT, RUSTPAD, HttpServer, Rustpad, Server, http_request, percentile, status_mib  # noqa: E402
from faults import FaultProxy  # noqa: E402

PADS = 4
PEOPLE = 2
WINDOW = 10.0
LINE = re.compile(r"^c\d+-\d+$")


def tools_call(connection, request_id, tool, arguments):
    """One tools/call over --http: the JSON-RPC reply."""
    return http_request(connection, request_id, "tools/call", {"name": tool, "arguments": arguments})[1]


def call(connection, request_id, tool, arguments):
    """(milliseconds, outcome) of one call, where outcome is "ok", "not written", "pad full" (not
    written either: the pad reached the length this server writes to, short of Rustpad's limit by
    the room it leaves to people), "unknown" or the start of another failure's text."""
    began = time.perf_counter()
    reply = tools_call(connection, request_id, tool, arguments)
    elapsed = (time.perf_counter() - began) * 1000
    if "error" in reply:
        return elapsed, f"protocol error: {reply['error'].get('message', '')[:60]}"
    result = reply["result"]
    if not result.get("isError"):
        return elapsed, "ok"
    text = result["content"][0]["text"]
    if "Outcome unknown" in text:
        return elapsed, "unknown"
    if "leaving the last" in text or "more than Rustpad's limit" in text:
        return elapsed, "pad full"
    if "nothing was written" in text:
        return elapsed, "not written"
    return elapsed, text[:80]


class Person:
    """The test server's steady typist in one pad, straight to Rustpad (never through a proxy)."""

    def __init__(self, rustpad_url, pad, name):
        socket = rustpad_url.replace("http://", "ws://") + f"/api/socket/{pad}"
        self.process = subprocess.Popen(
            [RUSTPAD, "steady", "--url", socket, "--name", name, "--every-ms", "200"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def stop(self):
        self.process.stdin.close()
        report = json.loads(self.process.stdout.readline())
        self.process.wait()
        return report


class UpstreamRustpad:
    """Upstream Rustpad's server (`rustpad-server` from ekzhang/rustpad) on a free port; pads are
    seeded by a person setting their text, since upstream has no seeding route."""

    def __init__(self, binary):
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.process = subprocess.Popen([binary], env={"PORT": str(port)}, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{self.url}/api/stats").read()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("upstream Rustpad did not start")

    def seed(self, pad, text):
        socket = self.url.replace("http://", "ws://") + f"/api/socket/{pad}"
        subprocess.run([RUSTPAD, "set", "--url", socket], input=text, text=True, check=True, capture_output=True)

    def stop(self):
        self.process.terminate()
        self.process.wait()


def window_figures(records, since, until):
    """Calls that wrote and ended in [since, until) seconds of the run: how many, their p50 and
    p99 (a refusal, such as one once a pad is full, serves nothing)."""
    latencies = [ms for began, ms, outcome, _, _ in records if since <= began + ms / 1000 < until and outcome == "ok"]
    if not latencies:
        return {"calls": 0}
    return {
        "calls": len(latencies),
        "p50_ms": round(statistics.median(latencies), 1),
        "p99_ms": round(percentile(latencies, 0.99), 1),
    }


def cpu_seconds(pid):
    """User and system CPU time /proc/<pid>/stat gives a process so far, in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_seconds():
    """CPU seconds all of this machine's cores have been busy (neither idle nor waiting on disk)."""
    with open("/proc/stat") as stat:
        fields = [int(n) for n in stat.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


class CpuSampler:
    """CPU seconds each named group of processes used in each window of the run, and the whole
    machine: to tell whether a window's calls were bounded by this server's work, Rustpad's, or the
    clients' (the bench's own threads and the people share the two cores)."""

    def __init__(self, processes):
        self.processes = processes
        self.samples = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _sample(self):
        sample = {name: sum(cpu_seconds(pid) for pid in pids) for name, pids in self.processes.items()}
        sample["machine"] = machine_busy_seconds()
        return sample

    def _run(self):
        previous = self._sample()
        while not self.stopped.wait(WINDOW):
            now = self._sample()
            self.samples.append({name: round(now[name] - previous[name], 1) for name in now})
            previous = now

    def stop(self):
        self.stopped.set()
        self.thread.join()
        return self.samples


def load_run(rustpad, seconds, clients, cut=0.0, label="load"):
    """`clients` threads append unique lines to PADS pads over --http for `seconds`, people typing
    in the first PEOPLE pads; with `cut`, that share of edits loses its acknowledgement."""
    pads = [f"{label}-{n}" for n in range(PADS)]
    for pad in pads:
        rustpad.seed(pad, text="P:\n")
    proxy = None
    url = rustpad.url
    if cut:
        proxy = FaultProxy(int(rustpad.url.rsplit(":", 1)[1]), seed=7)
        proxy.cut_after_edit(chance=cut)
        url = proxy.url
    server = HttpServer(url)
    people = [Person(rustpad.url, pads[n], f"person{n}") for n in range(PEOPLE)]
    records = []  # (began s since start, ms, outcome, pad, line)
    lock = threading.Lock()
    start = time.perf_counter()
    deadline = start + seconds
    sampler = CpuSampler(
        {
            "server": [server.process.pid],
            "rustpad": [rustpad.process.pid],
            "clients": [os.getpid()],
            "people": [person.process.pid for person in people],
        }
    )

    def client(k):
        connection = server.connection()
        pad = pads[k % PADS]
        n = 0
        while time.perf_counter() < deadline:
            line = f"c{k}-{n}"
            began = time.perf_counter() - start
            try:
                ms, outcome = call(connection, n, "append_to_document", {"id": pad, "text": line + "\n"})
            except (OSError, http.client.HTTPException) as error:
                ms, outcome = (time.perf_counter() - start - began) * 1000, f"transport: {error}"[:80]
                connection.close()
                connection = server.connection()
            with lock:
                records.append((began, ms, outcome, pad, line))
            n += 1
        connection.close()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    cpu = sampler.stop()
    reports = [person.stop() for person in people]
    rss = round(status_mib(server.process.pid, "VmHWM"), 1)
    connection = server.connection()
    revisions = [revision_of(connection, pad) for pad in pads]
    connection.close()
    server.stop()
    if proxy is not None:
        proxy.close()

    texts = {}
    for pad in pads:
        with urllib.request.urlopen(f"{rustpad.url}/api/text/{pad}") as reply:
            texts[pad] = reply.read().decode()
    present = Counter()
    for pad, text in texts.items():
        present.update((pad, line) for line in text.split("\n") if LINE.match(line))
    by_outcome = Counter(outcome for _, _, outcome, _, _ in records)
    landed = {(pad, line) for _, _, outcome, pad, line in records if outcome == "ok"}
    not_written = {(pad, line) for _, _, outcome, pad, line in records if outcome in ("not written", "pad full")}
    full_at = min((began for began, _, outcome, _, _ in records if outcome == "pad full"), default=None)
    people_present = sum(texts[pads[n]].split("\n")[0].endswith(r["typed"]) for n, r in enumerate(reports))
    return {
        "clients": clients,
        "seconds": round(elapsed, 1),
        "cut_share": cut,
        "calls": len(records),
        "outcomes": dict(by_outcome),
        "first_10s": window_figures(records, 0, WINDOW),
        "last_10s": window_figures(records, seconds - WINDOW, seconds),
        # Calls served in each 10 s, and how far the pads had grown by its end, to tell a write's
        # cost at a given pad size.
        "per_10s": [
            window_figures(records, start, start + WINDOW).get("calls", 0)
            for start in range(0, int(seconds), int(WINDOW))
        ],
        # CPU seconds each party (this server, Rustpad, the bench's clients, the people) and the
        # whole machine used in each 10 s (of 2 × 10 on two cores).
        "cpu_s_per_10s": cpu,
        # Appends landed (an append on a connection held between calls is one history entry, on
        # a fresh one two: its mark and its edit; `entries_per_pad` has the end's true count).
        "appends_per_pad_by_10s": [
            sum(1 for began, ms, outcome, _, _ in records if outcome == "ok" and began + ms / 1000 < start + WINDOW)
            // len(pads)
            for start in range(0, int(seconds), int(WINDOW))
        ],
        # And how long its text had grown (Rustpad applies every entry to the whole text).
        "chars_per_pad_by_10s": [
            sum(len(line) + 1 for began, ms, outcome, _, line in records if outcome == "ok" and began + ms / 1000 < start + WINDOW)
            // len(pads)
            for start in range(0, int(seconds), int(WINDOW))
        ],
        # When a pad first refused an append for being full: from then on its appends are refused,
        # while people go on typing in the room this server leaves them.
        "pad_full_at_s": round(full_at, 1) if full_at is not None else None,
        "lost": sum(1 for key in landed if present[key] == 0),
        "doubled": sum(1 for count in present.values() if count > 1),
        "not_written_but_present": sum(1 for key in not_written if present[key] > 0),
        "entries_per_pad": revisions,
        "people": [{k: r[k] for k in ("acknowledged", "disconnections", "reasons", "heard")} for r in reports],
        # What a person's editor was sent per call of ours on its pad: relayed messages (names,
        # carets, departures: Rustpad's small queue) and history entries (marks and edits).
        "per_call_seen_by_people": per_call_heard(records, pads, reports),
        "people_typing_all_present": people_present == len(reports),
        "cuts": proxy.counts["after_edit"] if proxy else 0,
        "peak_rss_mib": rss,
    }


def per_call_heard(records, pads, reports):
    calls = Counter(pad for _, _, _, pad, _ in records)
    heard = Counter()
    for n, report in enumerate(reports):
        heard["calls"] += calls[pads[n]]
        heard["relayed"] += report["heard"]["relayed"]
        heard["entries"] += report["heard"]["entries"]
    if not heard["calls"]:
        return None
    return {kind: round(heard[kind] / heard["calls"], 2) for kind in ("relayed", "entries")}


def revision_of(connection, pad):
    """How many entries the pad's history holds, as get_document_info says."""
    reply = tools_call(connection, 0, "get_document_info", {"id": pad})
    return reply["result"]["structuredContent"]["revision"]


class ShapedLink:
    """A loopback TCP relay to `upstream_port` with `delay` seconds each way and `rate` bytes per
    second each way: bytes go out `delay` after they came in, no faster than the rate, as on a
    real link (a delay line, so latency is paid once per burst, not once per chunk)."""

    def __init__(self, upstream_port, delay, rate):
        self.upstream_port, self.delay, self.rate = upstream_port, delay, rate
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        ready.wait(30)
        self.url = f"http://127.0.0.1:{self.port}"

    def _run(self, ready):
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._accept, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    async def _accept(self, client_r, client_w):
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        try:
            await asyncio.gather(self._direction(client_r, server_w), self._direction(server_r, client_w))
        except asyncio.CancelledError:  # the link is closing
            pass

    async def _direction(self, reader, writer):
        line = asyncio.Queue()

        async def take_in():
            try:
                while data := await reader.read(1 << 16):
                    line.put_nowait((time.monotonic(), data))
            except OSError:  # a reset ends this direction like a close
                pass
            line.put_nowait((time.monotonic(), b""))

        async def give_out():
            free_at = 0.0
            while True:
                arrived, data = await line.get()
                if not data:
                    break
                now = time.monotonic()
                start = max(arrived + self.delay, free_at, now)
                free_at = start + len(data) / self.rate
                await asyncio.sleep(free_at - now)
                writer.write(data)
                await writer.drain()
            writer.close()

        await asyncio.gather(take_in(), give_out(), return_exceptions=True)

    def close(self):
        async def shutdown():
            others = asyncio.all_tasks() - {asyncio.current_task()}
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)
            self.loop.stop()

        self.loop.call_soon_threadsafe(self.loop.create_task, shutdown())


def long_pad_over_slow_link(rustpad, calls=7):
    """append_to_document p50 on a small pad and on a pad of 100,000 entries, over 50 Mbit/s with
    20 ms each way, through one stdio server, one call after another."""
    link = ShapedLink(int(rustpad.url.rsplit(":", 1)[1]), delay=0.020, rate=50e6 / 8)
    rustpad.seed("slow-small", text="small\n")
    rustpad.seed("slow-long", ops=100_000, char="x")
    server = Server(link.url)
    server.initialize()
    figures = {}
    try:
        for name, pad in (("small pad", "slow-small"), ("100k-entry pad", "slow-long")):
            server.call("append_to_document", {"id": pad, "text": "w"})  # warm
            times = [server.call("append_to_document", {"id": pad, "text": "y"})[1] for _ in range(calls)]
            figures[name] = {"p50_ms": round(statistics.median(times), 1), "n": calls}
    finally:
        server.stop()
        link.close()
    figures["ratio"] = round(figures["100k-entry pad"]["p50_ms"] / figures["small pad"]["p50_ms"], 1)
    return figures


def last_counted_window(run):
    """The index of the last whole 10 s before a pad filled (or of the run's last 10 s): once a pad
    is full its appends are refused, so later windows say nothing of what a write costs."""
    last = len(run["per_10s"]) - 1
    if run["pad_full_at_s"] is not None:
        last = min(last, int(run["pad_full_at_s"] // WINDOW) - 1)
    return last


def flat_server_ceiling(run):
    """What the ratio would be if this server's CPU per call stayed as in the first 10 s while
    everything else on the machine cost what it did: the best any server could do on this machine
    against this Rustpad, which applies each entry to the whole text. Taken at
    `last_counted_window`."""
    windows = run["cpu_s_per_10s"]
    last = min(last_counted_window(run), len(windows) - 1)
    calls = run["per_10s"]
    if last < 1 or not calls[0] or not calls[last]:
        return "ceiling with a server whose cost does not grow: not enough windows"
    first_cpu, last_cpu = windows[0], windows[last]
    per_call = {name: (first_cpu[name] / calls[0], last_cpu[name] / calls[last]) for name in first_cpu}
    parts = ", ".join(f"{name} {a * 1000:.2f} → {b * 1000:.2f}" for name, (a, b) in per_call.items())
    machine_first, machine_last = per_call["machine"]
    server_first, server_last = per_call["server"]
    ceiling = machine_first / (machine_last - server_last + server_first)
    return (
        f"CPU ms per call, first 10 s → 10 s ending at {10 * (last + 1)} s: {parts}; with this server's"
        f" cost per call held at the first 10 s', the ratio there would be {ceiling:.2f}"
    )


def describe(run):
    first, last = run["first_10s"], run["last_10s"]
    print(
        f"{run['clients']} clients over --http for {run['seconds']} s"
        + (f", {run['cut_share']:.0%} of edits' acknowledgements cut ({run['cuts']} cuts)" if run["cut_share"] else "")
        + f": {run['calls']} calls"
    )
    print(f"  first 10 s: {first}")
    print(f"  last 10 s:  {last}")
    print(f"  calls per 10 s: {run['per_10s']}")
    print(f"  appends landed per pad by then: {run['appends_per_pad_by_10s']}")
    print(f"  characters per pad (ours) by then: {run['chars_per_pad_by_10s']}")
    for name in ("server", "rustpad", "clients", "people", "machine"):
        print(f"  CPU seconds of {name} per 10 s: {[window[name] for window in run['cpu_s_per_10s']]}")
    ratio = last.get("calls", 0) / max(first.get("calls", 0), 1)
    verdict = "meets" if ratio >= 2 / 3 else "MISSES"
    print(f"  served in the last 10 s / the first: {ratio:.2f} (target ≥ 0.67): {verdict} it")
    if run["pad_full_at_s"] is not None:
        last_whole = last_counted_window(run)
        before = run["per_10s"][last_whole] / max(first.get("calls", 0), 1) if last_whole >= 0 else 0
        print(
            f"  a pad was full (for this server's writes) at {run['pad_full_at_s']} s; in the last 10 s before"
            f" it, served / the first: {before:.2f}"
        )
    print(f"  {flat_server_ceiling(run)}")
    print(f"  outcomes: {run['outcomes']}")
    print(
        f"  lost {run['lost']}, doubled {run['doubled']}, reported not written but present"
        f" {run['not_written_but_present']}; entries per pad at the end {run['entries_per_pad']}"
    )
    people = ", ".join(
        f"{p['acknowledged']} keystrokes, {p['disconnections']} disconnections"
        + (f" ({'; '.join(sorted(set(p['reasons'])))})" if p["reasons"] else "")
        for p in run["people"]
    )
    print(f"  people: {people}; all their typing present: {run['people_typing_all_present']}")
    print(f"  a person's editor was sent, per call of ours on its pad: {run['per_call_seen_by_people']}")
    print(f"  server peak RSS {run['peak_rss_mib']} MiB")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--cut-seconds", type=float, default=45)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--upstream", metavar="BIN", help="upstream Rustpad's server, for the load runs only")
    options = parser.parse_args()
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    rustpad = UpstreamRustpad(options.upstream) if options.upstream else Rustpad()
    try:
        results = {"load": load_run(rustpad, options.seconds, options.clients)}
        describe(results["load"])
        results["cut"] = load_run(rustpad, options.cut_seconds, options.clients, cut=0.10, label="cut")
        describe(results["cut"])
        if not options.upstream:
            results["slow_link"] = long_pad_over_slow_link(rustpad)
            slow = results["slow_link"]
            verdict = "meets" if slow["ratio"] <= 2 else "MISSES"
            print(
                f"append over 50 Mbit/s, 20 ms: small pad p50 {slow['small pad']['p50_ms']} ms, 100k-entry pad"
                f" {slow['100k-entry pad']['p50_ms']} ms ({slow['ratio']} ×, target ≤ 2 ×): {verdict} it"
            )
    finally:
        rustpad.stop()
    OUT.mkdir(parents=True, exist_ok=True)
    written = OUT / ("load-upstream.json" if options.upstream else "load.json")
    written.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written to {written}")


if __name__ == "__main__":
    sys.exit(main())
