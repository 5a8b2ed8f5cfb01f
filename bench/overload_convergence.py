"""The adaptive limit's convergence (bench/overload-convergence): Floodgate with
`max_in_flight = "auto"` in front of a backend of fixed capacity (WORKERS requests at once, each
taking SERVICE ms, the rest waiting inside it), loaded by wrk with more connections than the
backend has workers. Every INTERVAL it samples the pool's `floodgate_overload_limit` and
`floodgate_overload_in_flight` and the backend's own view (the median time a request spent in
it, waiting and served, and the most it held at once); a third of the way in, the backend
becomes slower (SLOW ms a request), and two thirds in it is fast again. Writes the samples as
CSV, the plot as PNG, and prints a summary.

usage: python3 bench/overload_convergence.py FLOODGATE_BIN OUT.png OUT.csv
       (env: WORKERS=8 SERVICE_MS=40 SLOW_MS=80 CLIENTS=32 SECONDS=45 INTERVAL=0.2 WORKERS_PROXY=2;
       PROXY_CPU and REST_CPU: command prefixes, e.g. "taskset -c 0")
       python3 bench/overload_convergence.py backend PORT WORKERS SERVICE_MS   (the backend alone)
"""

import asyncio
import json
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


# The backend: WORKERS requests served at once, each taking the service time; the others wait
# inside it. GET /_service/MS sets the service time; GET /_stats answers what it saw since the
# last /_stats: {"held": now, "most_held": ..., "median_ms": ..., "answers": ..., "service_ms": ...}.
class Backend:
    def __init__(self, workers, service_ms):
        self.workers = asyncio.Semaphore(workers)
        self.service_ms = service_ms
        self.held = 0
        self.most_held = 0
        self.latencies = []

    async def serve(self, reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1]
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                if length:
                    await reader.readexactly(length)
                if path.startswith("/_service/"):
                    self.service_ms = float(path.rsplit("/", 1)[1])
                    body = b"ok\n"
                elif path == "/_stats":
                    body = json.dumps(self.stats()).encode()
                else:
                    body = await self.work()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(body) + body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def work(self):
        start = time.monotonic()
        self.held += 1
        self.most_held = max(self.most_held, self.held)
        try:
            async with self.workers:
                await asyncio.sleep(self.service_ms / 1000)
        finally:
            self.held -= 1
        self.latencies.append((time.monotonic() - start) * 1000)
        return b"ok\n"

    def stats(self):
        latencies, self.latencies = self.latencies, []
        most, self.most_held = self.most_held, self.held
        return {
            "held": self.held,
            "most_held": most,
            "median_ms": statistics.median(latencies) if latencies else None,
            "answers": len(latencies),
            "service_ms": self.service_ms,
        }


async def run_backend(port, workers, service_ms):
    backend = Backend(workers, service_ms)
    server = await asyncio.start_server(backend.serve, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"port {port} never opened")


def get(url):
    with urllib.request.urlopen(url, timeout=2) as answer:
        return answer.read().decode()


def gauges(metrics):
    """The pool's limit and in flight, and all shed requests, from the metrics text."""
    found = {"limit": None, "in_flight": None, "shed": 0.0}
    for line in metrics.splitlines():
        if line.startswith("floodgate_overload_limit{"):
            found["limit"] = float(line.rsplit(" ", 1)[1])
        elif line.startswith("floodgate_overload_in_flight{"):
            found["in_flight"] = float(line.rsplit(" ", 1)[1])
        elif line.startswith("floodgate_overload_shed_total{"):
            found["shed"] += float(line.rsplit(" ", 1)[1])
    return found


def measure(binary, out_png, out_csv):
    env = os.environ
    workers = int(env.get("WORKERS", 8))
    service = float(env.get("SERVICE_MS", 40))
    slow = float(env.get("SLOW_MS", 80))
    clients = int(env.get("CLIENTS", 32))
    seconds = float(env.get("SECONDS", 45))
    interval = float(env.get("INTERVAL", 0.2))
    threads = int(env.get("WORKERS_PROXY", 2))
    proxy_cpu = shlex.split(env.get("PROXY_CPU", ""))
    rest_cpu = shlex.split(env.get("REST_CPU", ""))
    up, port, admin = free_port(), free_port(), free_port()
    started = []
    work = tempfile.mkdtemp()
    try:
        started.append(subprocess.Popen(
            rest_cpu + [sys.executable, __file__, "backend", str(up), str(workers), str(service)]))
        config = os.path.join(work, "floodgate.toml")
        with open(config, "w") as f:
            # max_queued: every client waits for a slot (none is shed), so the load stays
            # CLIENTS requests at once and the proxy host is not busy answering 503s.
            f.write(f'[server]\nlisten = "127.0.0.1:{port}"\nthreads = {threads}\n'
                    f'[admin]\nlisten = "127.0.0.1:{admin}"\n'
                    f'[upstream]\nbackends = ["127.0.0.1:{up}"]\n'
                    f'[overload]\nmax_in_flight = "auto"\nmax_queued = {clients * 2}\n')
        started.append(subprocess.Popen(proxy_cpu + [binary, "--config", config],
                                        stderr=subprocess.DEVNULL))
        wait_port(up)
        wait_port(port)
        wait_port(admin)
        get(f"http://127.0.0.1:{up}/_stats")
        wrk = subprocess.Popen(
            rest_cpu + ["wrk", "-t1", f"-c{clients}", f"-d{int(seconds + 2)}s",
                        f"http://127.0.0.1:{port}/"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        started.append(wrk)
        phases = [(0.0, service), (seconds / 3, slow), (2 * seconds / 3, service)]
        samples = []
        start = time.monotonic()
        phase = 0
        while (now := time.monotonic() - start) < seconds:
            if phase + 1 < len(phases) and now >= phases[phase + 1][0]:
                phase += 1
                get(f"http://127.0.0.1:{up}/_service/{phases[phase][1]:g}")
            found = gauges(get(f"http://127.0.0.1:{admin}/metrics"))
            seen = json.loads(get(f"http://127.0.0.1:{up}/_stats"))
            samples.append({"t": round(now, 3), **found, **seen})
            time.sleep(max(0.0, interval - (time.monotonic() - start - now)))
        wrk_out = wrk.communicate(timeout=seconds + 10)[0]
    finally:
        for p in started:
            if p.poll() is None:
                p.terminate()
        for p in started:
            p.wait()
    with open(out_csv, "w") as f:
        columns = ["t", "limit", "in_flight", "shed", "held", "most_held", "median_ms",
                   "answers", "service_ms"]
        f.write(",".join(columns) + "\n")
        for s in samples:
            f.write(",".join("" if s[c] is None else str(s[c]) for c in columns) + "\n")
    plot(samples, phases, workers, clients, seconds, out_png)
    summary(samples, phases, workers, wrk_out)


def plot(samples, phases, workers, clients, seconds, out_png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [s["t"] for s in samples]
    fig, ax = plt.subplots(figsize=(10, 5.8), dpi=110)
    ax.axvspan(phases[1][0], phases[2][0], color="0.92", zorder=0)
    ax.step(t, [s["limit"] for s in samples], where="post", color="tab:blue", lw=2,
            label="floodgate_overload_limit")
    ax.plot(t, [s["in_flight"] for s in samples], color="tab:green", lw=1, alpha=0.8,
            label="floodgate_overload_in_flight")
    ax.plot(t, [s["most_held"] for s in samples], color="tab:orange", lw=1, ls=":",
            label="most the backend held in the sample")
    ax.axhline(workers, color="black", lw=0.8, ls="--")
    ax.text(0.3, workers + 0.3, f"{workers} workers", fontsize=9)
    ax.set_xlabel("seconds")
    ax.set_ylabel("requests at once")
    ax.set_xlim(0, seconds)
    ax.set_ylim(0, max(workers * 1.6, max(s["most_held"] for s in samples) + 2))
    lat = ax.twinx()
    lat.plot(t, [s["median_ms"] for s in samples], color="tab:red", lw=1.2,
             label="backend latency, median per sample (ms)")
    lat.set_ylabel("backend latency, ms (waiting + served)")
    lat.set_ylim(0, max((s["median_ms"] or 0) for s in samples) * 1.5)
    for (start, ms), end in zip(phases, [p[0] for p in phases[1:]] + [seconds]):
        ax.text((start + end) / 2, ax.get_ylim()[1] * 0.95, f"{ms:g} ms a request",
                ha="center", fontsize=9)
    handles = ax.get_legend_handles_labels()
    more = lat.get_legend_handles_labels()
    ax.legend(handles[0] + more[0], handles[1] + more[1], loc="upper center",
              bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=9, frameon=False)
    ax.set_title(f'max_in_flight = "auto": a backend of {workers} workers, {clients} clients')
    fig.tight_layout()
    fig.savefig(out_png)


def summary(samples, phases, workers, wrk_out):
    ends = [p[0] for p in phases[1:]] + [samples[-1]["t"] + 1]
    for (start, ms), end in zip(phases, ends):
        part = [s for s in samples if start <= s["t"] < end]
        limits = [s["limit"] for s in part]
        second_half = [s for s in part if s["t"] >= (start + end) / 2]
        settled = statistics.median(s["limit"] for s in second_half)
        if part[0]["limit"] < workers:
            reached = next((s["t"] - start for s in part if s["limit"] >= workers), None)
            how = f"first at {workers} after"
        else:
            reached = next((s["t"] - start for s in part if s["limit"] <= settled), None)
            how = f"first at {settled:g} after"
        lat = [s["median_ms"] for s in second_half if s["median_ms"] is not None]
        print(f"{start:5.1f}–{end:5.1f} s, {ms:g} ms: limit {min(limits):g}–{max(limits):g}, "
              f"second half {min(s['limit'] for s in second_half):g}–"
              f"{max(s['limit'] for s in second_half):g}, median {settled:g}; "
              f"{how} {'never' if reached is None else f'{reached:.1f} s'}; "
              f"backend held at most {max(s['most_held'] for s in part)}; "
              f"its latency (second half, median of samples) "
              f"{statistics.median(lat) if lat else float('nan'):.1f} ms; "
              f"in flight at most {max(s['in_flight'] for s in part):g}")
    print(f"shed: {samples[-1]['shed']:g}")
    print(wrk_out.strip())


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "backend":
        asyncio.run(run_backend(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])))
    elif len(sys.argv) == 4:
        measure(*sys.argv[1:])
    else:
        sys.exit(__doc__)
