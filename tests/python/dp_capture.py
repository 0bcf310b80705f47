"""Capture many (spec, ranks) cases in ONE process (test helper for test_dp.py).

Each capture process of ``tangle verify`` imports torch anew (tens of seconds on a loaded 2-core
machine); the data-parallel tests need a dozen graphs, so they are captured here in one process:
the spec without a process group, each rank under its own fake process group (initialized and
destroyed in turn). Each case's folder then holds what ``tangle verify MODULE:build`` writes
(spec.py, impl.r{rank}.py, placeholder maps, check.rel from the module's ``relation``).

    python dp_capture.py OUT_ROOT NAME=MODULE:SPEC:BUILD:RANKS[:RELATION] ...

RELATION ``program``: SPEC and BUILD return ``tangle.pp.RankProgram``s (a training step traced with make_fx,
as tangle.ddp / tangle.fsdp make them); the ranks are traced under the fake process group in this process
and check.rel is ``pp.write_relation``'s with the gradients' expectations.

Tests call ``capture_in_child(root, {NAME: "MODULE:SPEC:BUILD:RANKS[:RELATION]", ...})``.
"""
import importlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def capture_in_child(root, cases, timeout=900):
    """Captures every case under ROOT/NAME in one child process (torch imported once); returns ROOT."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"), HERE]))
    r = subprocess.run([sys.executable, os.path.abspath(__file__), str(root),
                        *[f"{k}={v}" for k, v in cases.items()]], capture_output=True, text=True, env=env,
                       timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return root


def capture_case(out, module, spec_name, build_name, ranks, relation_name="relation"):
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    from tangle import capture
    verify = importlib.import_module("tangle.verify")

    mod = importlib.import_module(module)
    os.makedirs(out, exist_ok=True)
    spec = os.path.join(out, "spec.py")
    fn, args, *dyn = getattr(mod, spec_name)()
    capture.capture(fn, tuple(args), spec, dyn[0] if dyn else None, os.path.join(out, "spec.params.json"))
    impls = []
    for r in range(ranks):
        path = os.path.join(out, f"impl.r{r}.py")
        dist.init_process_group("fake", store=FakeStore(), rank=r, world_size=ranks)
        try:
            fn, args, *dyn = getattr(mod, build_name)(r, ranks)
            capture.capture(fn, tuple(args), path, dyn[0] if dyn else None, os.path.join(out, f"impl.r{r}.params.json"))
        finally:
            dist.destroy_process_group()
        impls.append(path)
    text = verify._user_relation(getattr(mod, relation_name)(ranks), ranks, verify._load_params(spec) or {},
                                 [verify._load_params(p) or {} for p in impls], verify._node_names(spec),
                                 [verify._node_names(p) for p in impls], {})
    with open(os.path.join(out, "check.rel"), "w") as f:
        f.write(text)


def capture_program(out, module, spec_name, build_name, ranks):
    from tangle import pp

    os.makedirs(out, exist_ok=True)
    pp._fake_main((module, build_name), (module, spec_name), ranks, out, list(range(ranks)), True)
    pp.write_relation(out, ranks, expect=True)


def main(argv):
    root = argv[0]
    for item in argv[1:]:
        name, ref = item.split("=", 1)
        module, spec_name, build_name, ranks, *rel = ref.split(":")
        if rel == ["program"]:
            capture_program(os.path.join(root, name), module, spec_name, build_name, int(ranks))
        else:
            capture_case(os.path.join(root, name), module, spec_name, build_name, int(ranks), *rel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
