#!/usr/bin/env python3
"""The `flakestat serve` benchmark (issue 26): deliveries acknowledged per second, and the lag
from a delivery to its run's classified jobs.

    cargo build --release && benches/serve.py            # target/release/flakestat
    FLAKESTAT=target/debug/flakestat N=2000 C=4 benches/serve.py

1. Throughput: N signed `workflow_job` deliveries (each its own X-GitHub-Delivery, so each is a
   committed row of the queue), from C keep-alive connections at once; the figure is
   acknowledged deliveries per second (all must be answered 202).
2. Lag: `serve --replay fixtures/cuda-python-flake`; one `workflow_run completed` delivery of a
   failed story run; the time until /metrics counts the ingest done (its jobs, failed-job logs
   and their classifications committed). Repeated for RUNS runs; the median is printed.
3. The story: `flakestat replay deliver` posts the story's deliveries of its last week (every
   run's and job's events as GitHub sends them, SINCE) from C connections to `serve --replay`;
   the figures are the deliveries acknowledged per second and the time from the last answer
   until the queue is drained (every completed run attempt ingested and classified).

Only the standard library; the client runs on the same machine, so both figures are lower
bounds of what the server alone would do.
"""
import hashlib, hmac, http.client, json, os, statistics, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("FLAKESTAT", os.path.join(ROOT, "target/release/flakestat"))
N = int(os.environ.get("N", "2000"))
C = int(os.environ.get("C", "4"))
RUNS = int(os.environ.get("RUNS", "5"))
SINCE = os.environ.get("SINCE", "2026-07-25")
SECRET = b"bench-secret"


def start(tmp, *args):
    secret = os.path.join(tmp, "secret")
    with open(secret, "wb") as f:
        f.write(SECRET)
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN", "FLAKESTAT_STORE")}
    proc = subprocess.Popen(
        [BIN, "-q", "serve", "--listen", "127.0.0.1:0", "--webhook-secret-file", secret, *args],
        stdout=subprocess.PIPE, env=env)
    host, port = json.loads(proc.stdout.readline())["listen"].rsplit(":", 1)
    return proc, host, int(port)


def post(conn, event, delivery, body):
    sig = "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()
    conn.request("POST", "/webhook", body, {
        "Content-Type": "application/json", "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": sig})
    r = conn.getresponse()
    r.read()
    return r.status


def metric(host, port, series):
    conn = http.client.HTTPConnection(host, port)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return 0.0


def throughput(tmp):
    proc, host, port = start(tmp, "--repo", "octo/demo", "--cache-dir", os.path.join(tmp, "t"),
                             "--api-url", "http://127.0.0.1:1", "--resync", "0")
    body = json.dumps({"action": "queued", "repository": {"full_name": "octo/demo"},
                       "workflow_job": {"run_id": 1, "run_attempt": 1}}).encode()
    statuses = []

    def client(k):
        conn = http.client.HTTPConnection(host, port)
        for i in range(k, N, C):
            statuses.append(post(conn, "workflow_job", f"bench-{i}", body))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(C)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    proc.terminate()
    proc.wait()
    assert statuses.count(202) == N, f"{len(statuses)} answers, {statuses.count(202)} of them 202"
    return N / elapsed


def lag(tmp):
    story = os.path.join(ROOT, "fixtures/cuda-python-flake")
    proc, host, port = start(tmp, "--replay", story, "--cache-dir", os.path.join(tmp, "l"),
                             "--signatures", os.path.join(ROOT, "signatures"), "--resync", "0")
    runs = failed_runs(tmp, story)
    conn = http.client.HTTPConnection(host, port)
    lags = []
    for i, (run_id, created) in enumerate(runs[:RUNS]):
        body = json.dumps({"action": "completed", "repository": {"full_name": "NVIDIA/cuda-python"},
                           "workflow_run": {"id": run_id, "run_attempt": 1, "created_at": created}}).encode()
        t0 = time.perf_counter()
        assert post(conn, "workflow_run", f"lag-{i}", body) == 202
        while metric(host, port, 'flakestat_ingests_total{outcome="done"}') < i + 1:
            time.sleep(0.01)
        lags.append(time.perf_counter() - t0)
    proc.terminate()
    proc.wait()
    return lags


def story(tmp):
    story = os.path.join(ROOT, "fixtures/cuda-python-flake")
    proc, host, port = start(tmp, "--replay", story, "--cache-dir", os.path.join(tmp, "w"),
                             "--signatures", os.path.join(ROOT, "signatures"), "--resync", "0")
    out = subprocess.run([BIN, "-q", "replay", "deliver", "--replay", story, "--since", SINCE,
                          "--to", f"http://{host}:{port}/webhook", "--webhook-secret-file",
                          os.path.join(tmp, "secret"), "--connections", str(C)],
                         check=True, stdout=subprocess.PIPE)
    sent = json.loads(out.stdout)
    t0 = time.perf_counter()
    while metric(host, port, "flakestat_queue_depth") > 0:
        time.sleep(0.05)
    drained = time.perf_counter() - t0
    runs = metric(host, port, 'flakestat_ingests_total{outcome="done"}')
    proc.terminate()
    proc.wait()
    return sent["sent"] / sent["seconds"], sent["sent"], runs, drained


def failed_runs(tmp, story):
    """Failed first attempts of the story, from a survey of it into a store of its own."""
    import sqlite3
    cache = os.path.join(tmp, "s")
    subprocess.run([BIN, "-q", "survey", "--replay", story, "--repo", "NVIDIA/cuda-python",
                    "--since", "2026-06-15", "--until", "2026-07-31", "--cache-dir", cache,
                    "--format", "json"], check=True, stdout=subprocess.DEVNULL)
    db = sqlite3.connect(os.path.join(cache, "store-v1/flakestat.sqlite3"))
    rows = db.execute(
        "SELECT id, created_at FROM runs WHERE run_attempt = 1 AND "
        "json_extract(json, '$.conclusion') = 'failure' ORDER BY created_at, id").fetchall()
    return [(i, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(c))) for i, c in rows]


if __name__ == "__main__":
    if not os.access(BIN, os.X_OK):
        sys.exit(f"benches/serve.py: no {BIN}; cargo build --release (or FLAKESTAT=path)")
    with tempfile.TemporaryDirectory() as tmp:
        rate = throughput(tmp)
        lags = lag(tmp)
        story_rate, story_sent, story_runs, drained = story(tmp)
    print(f"{BIN}: {rate:.0f} deliveries/s acknowledged and queued (N={N}, C={C}); "
          f"delivery to classified run: median {statistics.median(lags) * 1000:.0f} ms "
          f"(min {min(lags) * 1000:.0f}, max {max(lags) * 1000:.0f}, {len(lags)} runs)")
    print(f"{BIN}: the story since {SINCE}: {story_sent} deliveries at {story_rate:.0f}/s "
          f"acknowledged (C={C}); queue drained {drained:.1f} s after the last answer "
          f"({story_runs:.0f} run attempts ingested)")
