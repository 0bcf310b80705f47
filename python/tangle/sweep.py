"""``tangle sweep``: verify a grid of plans (target x ranks x layers x options) and print one table.

Each grid point is one ``tangle.verify.verify(...)`` call (capture, relation, ``tangle check``), run in a
worker: a local process pool (``--jobs N``), or tasks on a Ray cluster (``--ray ADDRESS``; ``--ray local``
starts a Ray instance on this machine). No verification logic here: each verdict is the C++ checker's.

    python -m tangle.sweep hf:llama hf:qwen2 --tp 2,4 --layers 1,2 [--jobs 2] [--json OUT]
    python -m tangle.sweep --grid GRID.json [--ray ADDRESS|local]

A grid file is a JSON object: ``{"target": [...], "tp": [...], "layers": [...], "sp": [...], "backward": [...],
"options": [...], "fixed": {...}}``; each list is an axis (the sweep is their product), ``fixed`` holds keyword
arguments of ``verify`` shared by every point (e.g. ``{"setup": "megatron_cpu"}``); or ``{"points": [{...}, ...]}``
lists the points themselves. Exit code: 1 if any point is a violation, else 2 if any is bad input, else 3 if any
is inconclusive, else 0.

On a Ray cluster every node must be able to import ``tangle`` (``pip install`` it there) and find the ``tangle``
binary (on PATH or ``$TANGLE_BIN``); a local instance is given this process's PYTHONPATH and TANGLE_BIN.
"""
from __future__ import annotations

import argparse
import concurrent.futures as futures
import dataclasses
import itertools
import json
import os
import sys
import time

AXES = ("target", "tp", "layers", "sp", "backward", "options")
# verify() keyword arguments a point may set (besides `target` and the axes); anything else is bad input.
POINT_KEYS = {"target", "tp", "layers", "sp", "backward", "options", "setup", "attn", "shape", "plan", "backend",
              "spec", "relation"}
SEVERITY = {"violation": 1, "error": 2, "inconclusive": 3, "refines": 0}


class SweepError(ValueError):
    """Bad input of the sweep itself (exit code 2): the message is one line."""


@dataclasses.dataclass
class PointResult:
    point: dict                # the verify() keyword arguments of this grid point
    verdict: str               # refines, violation, inconclusive, or error (bad input, capture failure)
    exit_code: int
    seconds: float             # the whole point: capture, relation and check
    check_seconds: float | None
    enodes_max: int | None
    failure: str | None        # the failing operator, or the error's one line
    worker: str                # host:pid that ran it

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


# ---------------------------------------------------------------- the grid

def expand(grid: dict) -> list[dict]:
    """The points of a grid: the product of its axes, each merged with `fixed`; or its explicit `points`."""
    if not isinstance(grid, dict):
        raise SweepError("a grid is a JSON object with axes (target, tp, layers, ...) or a list of points")
    fixed = grid.get("fixed", {})
    if not isinstance(fixed, dict):
        raise SweepError("`fixed` must be an object of verify() arguments")
    if "points" in grid:
        points = grid["points"]
        if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
            raise SweepError("`points` must be a list of objects")
        points = [{**fixed, **p} for p in points]
    else:
        unknown = set(grid) - set(AXES) - {"fixed"}
        if unknown:
            raise SweepError(f"unknown grid axis {sorted(unknown)[0]!r} (axes: {', '.join(AXES)}; `fixed` for the rest)")
        axes = []
        for name in AXES:
            values = grid.get(name)
            if values is None:
                continue
            if not isinstance(values, list) or not values:
                raise SweepError(f"grid axis {name!r} must be a non-empty list")
            axes.append([(name, v) for v in values])
        points = [{**fixed, **dict(combo)} for combo in itertools.product(*axes)]
    for p in points:
        if "target" not in p:
            raise SweepError(f"grid point {json.dumps(p)} has no target")
        unknown = set(p) - POINT_KEYS
        if unknown:
            raise SweepError(f"grid point {json.dumps(p)}: unknown argument {sorted(unknown)[0]!r}")
    if not points:
        raise SweepError("the grid has no points")
    return points


def _ints(text: str, flag: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise SweepError(f"{flag} takes comma-separated integers, got {text!r}") from None
    if not values:
        raise SweepError(f"{flag} is empty")
    return values


# ---------------------------------------------------------------- one point (runs in a worker)

def run_point(point: dict) -> PointResult:
    """Verifies one grid point; never raises (bad input becomes an `error` row)."""
    import importlib
    import socket

    v = importlib.import_module(__package__ + ".verify")  # the module (the package attribute is the function)
    kwargs = dict(point)
    target = kwargs.pop("target")
    worker = f"{socket.gethostname()}:{os.getpid()}"
    t0 = time.time()
    try:
        r = v.verify(target, log=lambda msg: None, **kwargs)
    except v.VerifyError as e:
        return PointResult(point, "error", v.BAD_INPUT, time.time() - t0, None, None, str(e), worker)
    except Exception as e:  # noqa: BLE001 -- a sweep reports every point, whatever one of them does
        return PointResult(point, "error", 4, time.time() - t0, None, None, f"{type(e).__name__}: {e}", worker)
    stats = r.json.get("stats", {})
    failure = None
    if r.failure is not None:
        failure = r.failure.operator + (f" ({r.failure.source_file}:{r.failure.source_line})"
                                        if r.failure.source_file else "")
    return PointResult(point, r.verdict, r.exit_code, time.time() - t0, stats.get("seconds"),
                       stats.get("enodes_max"), failure, worker)


# ---------------------------------------------------------------- runners

def run_local(points: list[dict], jobs: int, on_result=None) -> list[PointResult]:
    """Runs the points on a pool of `jobs` processes; results in grid order."""
    results: list[PointResult | None] = [None] * len(points)
    if jobs <= 1:
        for i, p in enumerate(points):
            results[i] = run_point(p)
            if on_result:
                on_result(results[i])
        return results
    with futures.ProcessPoolExecutor(max_workers=jobs) as pool:
        pending = {pool.submit(run_point, p): i for i, p in enumerate(points)}
        for f in futures.as_completed(pending):
            results[pending[f]] = f.result()
            if on_result:
                on_result(results[pending[f]])
    return results


def run_ray(points: list[dict], address: str, jobs: int, on_result=None) -> list[PointResult]:
    """Runs each point as a Ray task on the cluster at `address` ("local": a new instance on this machine
    with `jobs` CPUs). Each task asks for one CPU; Ray schedules them."""
    try:
        import ray
    except ImportError:
        raise SweepError("--ray needs the ray package (pip install ray)") from None
    env = {k: os.environ[k] for k in ("PYTHONPATH", "TANGLE_BIN", "PATH") if k in os.environ}
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [pkg_parent, env.get("PYTHONPATH")]))
    started_here = address == "local"
    try:
        if started_here:
            ray.init(num_cpus=max(1, jobs), include_dashboard=False, log_to_driver=False,
                     runtime_env={"env_vars": env})
        else:
            ray.init(address=address, log_to_driver=False)
    except Exception as e:  # noqa: BLE001 -- a cluster that cannot be reached is bad input
        raise SweepError(f"cannot connect to the Ray cluster at {address!r}: {str(e).splitlines()[0]}") from None
    try:
        task = ray.remote(num_cpus=1)(run_point)
        refs = {task.remote(p): i for i, p in enumerate(points)}
        results: list[PointResult | None] = [None] * len(points)
        waiting = list(refs)
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            for ref in done:
                results[refs[ref]] = ray.get(ref)
                if on_result:
                    on_result(results[refs[ref]])
        return results
    finally:
        ray.shutdown()


# ---------------------------------------------------------------- presenting

def _describe(point: dict) -> dict:
    cols = {"target": point["target"], "tp": point.get("tp", 2), "layers": point.get("layers", "")}
    extra = {k: v for k, v in point.items() if k not in ("target", "tp", "layers") and v not in (False, None, [], "")}
    cols["options"] = " ".join(f"{k}={v}" if v is not True else k for k, v in extra.items())
    return cols


def table(results: list[PointResult]) -> str:
    head = ["target", "tp", "layers", "options", "verdict", "total s", "check s", "e-nodes max", "failure / error"]
    rows = []
    for r in results:
        d = _describe(r.point)
        rows.append([str(d["target"]), str(d["tp"]), str(d["layers"]), d["options"], r.verdict,
                     f"{r.seconds:.1f}", "" if r.check_seconds is None else f"{r.check_seconds:.3f}",
                     "" if r.enodes_max is None else str(r.enodes_max), r.failure or ""])
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def exit_code(results: list[PointResult]) -> int:
    worst = 0
    for r in results:
        code = SEVERITY.get(r.verdict, 2)
        if code and (worst == 0 or code < worst):
            worst = code
    return worst


def sweep(grid: dict, jobs: int = 1, ray_address: str | None = None, log=None) -> list[PointResult]:
    """Verifies every point of `grid` (see expand) and returns the results in grid order."""
    points = expand(grid)
    n = len(points)
    done = [0]

    def on_result(r: PointResult):
        done[0] += 1
        if log:
            log(f"[{done[0]}/{n}] {r.point['target']} tp={r.point.get('tp', 2)}: {r.verdict} ({r.seconds:.1f} s)")

    if ray_address:
        return run_ray(points, ray_address, jobs, on_result)
    return run_local(points, jobs, on_result)


# ---------------------------------------------------------------- command line

class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise SweepError(message)


def main(argv=None) -> int:
    ap = _Parser(prog="tangle sweep", description="Verify a grid of plans and print one table.",
                 epilog="Exit codes: 1 if any point is a violation, else 2 if any is bad input, else 3 if any is "
                        "inconclusive, else 0.")
    ap.add_argument("targets", nargs="*", help="targets as for tangle verify (hf:llama, torchtitan:llama3, ...)")
    ap.add_argument("--grid", help="a JSON grid file (axes or points; see python -m tangle.sweep --help)")
    ap.add_argument("--tp", "--ranks", dest="tp", default="2", help="comma-separated ranks, e.g. 2,4")
    ap.add_argument("--layers", help="comma-separated layer counts, e.g. 1,2")
    ap.add_argument("--sp", choices=["on", "off", "both"], default="off", help="torchtitan: sequence parallel")
    ap.add_argument("--backward", choices=["on", "off", "both"], default="off", help="training step too")
    ap.add_argument("--setup", help="megatron: targets' setup module (as tangle verify --setup)")
    ap.add_argument("--jobs", "-j", type=int, default=1, help="points verified at once (default 1)")
    ap.add_argument("--ray", metavar="ADDRESS", help="run on a Ray cluster ('local': start one on this machine)")
    ap.add_argument("--json", dest="json_out", help="write the results as JSON here")
    ap.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    try:
        a = ap.parse_args(argv)
        if a.grid:
            if a.targets:
                raise SweepError("give targets or --grid, not both")
            try:
                with open(a.grid) as f:
                    grid = json.load(f)
            except OSError as e:
                raise SweepError(f"cannot read the grid file {a.grid}: {e.strerror}") from None
            except json.JSONDecodeError as e:
                raise SweepError(f"{a.grid}:{e.lineno}: not JSON: {e.msg}") from None
        elif a.targets:
            flags = {"on": [True], "off": [False], "both": [False, True]}
            grid = {"target": a.targets, "tp": _ints(a.tp, "--tp")}
            if a.layers:
                grid["layers"] = _ints(a.layers, "--layers")
            if a.sp != "off":
                grid["sp"] = flags[a.sp]
            if a.backward != "off":
                grid["backward"] = flags[a.backward]
            if a.setup:
                grid["fixed"] = {"setup": a.setup}
        else:
            raise SweepError("nothing to sweep: give targets or --grid FILE")
        if a.jobs < 1:
            raise SweepError(f"--jobs must be at least 1, got {a.jobs}")
        log = None if a.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
        results = sweep(grid, jobs=a.jobs, ray_address=a.ray, log=log)
    except SweepError as e:
        print(f"tangle sweep: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tangle sweep: interrupted", file=sys.stderr)
        return 130
    sys.stdout.write(table(results))
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump({"results": [r.to_json() for r in results], "exit_code": exit_code(results)}, f, indent=1)
    return exit_code(results)


if __name__ == "__main__":
    sys.exit(main())
