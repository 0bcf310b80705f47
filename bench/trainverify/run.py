"""TrainVerify's Llama-3 plans side by side: capture + check with tangle, beside its numbers.

    PYTHONPATH=python python3 bench/trainverify/run.py [--plans NAME,...] [--out DIR] [--json FILE]

Each plan is captured with tangle.pp from bench/trainverify/llama_pp.py: by default shapes-only
(capture_pipeline_fake: every rank traced in turn in one process on fake tensors under the fake
process group; the graphs are identical to a real run's), with --real every rank a gloo process
tracing one pipeline step on real tensors (the model's full memory per rank). Each is checked with
`tangle check --json`. The table gives capture wall seconds, the check's wall and CPU seconds and
peak RSS, and the verdict, next to TrainVerify's time on this machine kind
(/work/shared/notes/trainverify.md).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path[:0] = [os.path.join(ROOT, "python"), HERE]

# name: (environment of llama_pp, TrainVerify's tool time here in s or None)
PLANS = {
    "h128-s256-dp2pp2tp2": (dict(TV_HIDDEN=128, TV_SEQ=256, TV_DP=2, TV_PP=2, TV_TP=2, TV_NM=2, TV_LAYERS=2), 12.6),
    "h4096-s128-dp2pp2tp2": (dict(TV_HIDDEN=4096, TV_SEQ=128, TV_DP=2, TV_PP=2, TV_TP=2, TV_NM=2, TV_LAYERS=2), 7.1),
    "h128-s256-dp2pp2tp2-fulltp": (dict(TV_HIDDEN=128, TV_SEQ=256, TV_DP=2, TV_PP=2, TV_TP=2, TV_NM=2, TV_LAYERS=2,
                                        TV_FULLTP=1), None),
    # the planted bug (llama_pp TV_BUG): must be a violation at the last stage's first FFN residual add
    "h128-s256-dp2pp2tp2-bug-no-ffn-allreduce": (dict(TV_HIDDEN=128, TV_SEQ=256, TV_DP=2, TV_PP=2, TV_TP=2, TV_NM=2,
                                                      TV_LAYERS=2, TV_BUG="no_ffn_allreduce"), None),
    # mid-size reproduction of the 256-rank plan's 64-piece (DP x NM) concats: 16 ranks, cheap to capture
    "h64-dp8pp2tp1-nm8": (dict(TV_HIDDEN=64, TV_SEQ=16, TV_DP=8, TV_PP=2, TV_TP=1, TV_NM=8, TV_LAYERS=2), None),
    "h64-dp4pp2tp2-nm4": (dict(TV_HIDDEN=64, TV_SEQ=16, TV_DP=4, TV_PP=2, TV_TP=2, TV_NM=4, TV_LAYERS=2), None),
    "h4096-dp8pp4tp8-nm8": (dict(TV_HIDDEN=4096, TV_SEQ=128, TV_DP=8, TV_PP=4, TV_TP=8, TV_NM=8, TV_LAYERS=4), 334.0),
}


def check(tangle, rel, report):
    """(exit code, stdout, stderr, wall s, CPU s, peak RSS MB) of one `tangle check`."""
    import tempfile

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.time()
        p = subprocess.Popen([tangle, "check", rel, "--json", report], stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)  # this child's own CPU time and peak RSS
        wall = time.time() - t0
        out.seek(0)
        err.seek(0)
        return (os.waitstatus_to_exitcode(status), out.read(), err.read(), wall, usage.ru_utime + usage.ru_stime,
                usage.ru_maxrss / 1024)


def run_plan(name, out_root, tangle, real=False, workers=1, resume=False):
    from tangle import pp

    env, tv = PLANS[name]
    for k in ("TV_FULLTP", "TV_BUG"):  # set by an earlier plan
        os.environ.pop(k, None)
    os.environ.update({k: str(v) for k, v in env.items()})
    world = env["TV_DP"] * env["TV_PP"] * env["TV_TP"]
    out = os.path.join(out_root, name)
    row = dict(plan=name, ranks=world, trainverify_s=tv, capture="real (gloo)" if real else "fake tensors")
    try:
        refs = (("llama_pp", "build"), ("llama_pp", "spec"), world, out)
        seconds = pp.capture_pipeline(*refs, timeout=3600) if real else \
            pp.capture_pipeline_fake(*refs, timeout=3600 * 4, workers=workers, resume=resume)
        row.update(capture_s=round(seconds, 1), capture_workers=1 if real else workers)
        rel = pp.write_relation(out, world)
    except Exception as e:  # noqa: BLE001 -- reported in the table
        row.update(verdict="capture failed", error=str(e).splitlines()[0][:200])
        return row
    code, stdout, stderr, wall, cpu, rss = check(tangle, rel, os.path.join(out, "report.json"))
    row.update(check_s=round(wall, 2), check_cpu_s=round(cpu, 2), check_peak_rss_mb=round(rss))
    row["verdict"] = stdout.split("\n", 1)[0].removeprefix("verdict: ").strip() or f"exit {code}"
    if code not in (0, 1, 3):
        row["error"] = (stderr.strip().splitlines() or [""])[0][:200]
    if row["verdict"] == "violation":
        with open(os.path.join(out, "report.json")) as f:
            failure = json.load(f).get("failure") or {}
        row["failing"] = f"{failure.get('tensor')} ({failure.get('op')}): {failure.get('source', '')[:120]}"
    if tv:
        row["cpu_ratio"] = round(cpu / tv, 4)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--plans", default=",".join(PLANS))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench-trainverify"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--real", action="store_true", help="capture real tensors over gloo (full memory per rank)")
    ap.add_argument("--workers", type=int, default=1, help="capture processes (shapes-only capture)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the ranks an interrupted shapes-only capture of the same plan wrote in --out")
    ap.add_argument("--tangle", default=os.environ.get("TANGLE_BIN", os.path.join(ROOT, "build", "bin", "tangle")))
    a = ap.parse_args(argv)
    rows = [run_plan(n, a.out, a.tangle, a.real, a.workers, a.resume) for n in a.plans.split(",")]
    print(f"{'plan':32} {'ranks':>5} {'capture s':>9} {'check s':>8} {'CPU s':>7} {'RSS MB':>7} {'verdict':12} "
          "TrainVerify s")
    for r in rows:
        print(f"{r['plan']:32} {r['ranks']:>5} {r.get('capture_s', '-'):>9} {r.get('check_s', '-'):>8} "
              f"{r.get('check_cpu_s', '-'):>7} {r.get('check_peak_rss_mb') or '-':>7} {r['verdict']:12} "
              f"{r['trainverify_s'] or 'not covered'}"
              + (f"  ({r['error']})" if r.get("error") else "") + (f"\n    at {r['failing']}" if r.get("failing") else ""))
    with open(a.json or os.path.join(a.out, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
