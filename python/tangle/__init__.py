"""Python side of tangle (no verification logic here).

* ``tangle.verify(target, tp=2, layers=1, out=None) -> VerifyResult``: capture a model (``hf:llama``,
  ``hf:qwen2``, or ``MODULE:FUNCTION`` of your own code) and its ranks, write the relation, run
  ``tangle check`` and parse its JSON report (``python -m tangle.verify``, ``tangle verify``).
* ``tangle.check(relation_path) -> CheckResult``: run ``tangle check REL --json`` and parse it.
* ``tangle.sweep``: verify a grid of plans on a process pool or a Ray cluster (``tangle sweep``).
* ``tangle.capture``: capture ATen-level FX graphs from PyTorch programs.
* ``tangle.hf``: capture an HF transformers causal LM and its tensor-parallel ranks, with a placeholder
  map per graph and a relation file (``python -m tangle.hf llama --tp 2 --layers 1 --out DIR``).
* ``tangle.relfile``: read a relation file's header (spec, impl, ranks, lemmas, ``# expect:``).
* ``tangle.binary``: find the ``tangle`` CLI (``--tangle`` path, ``$TANGLE_BIN``, ``build/bin/tangle``).

Importing the package imports neither torch nor the submodules.
"""


def _verify_module():
    import importlib
    module = importlib.import_module(__name__ + ".verify")
    # Importing the submodule binds the package attribute `verify` to it: keep the function.
    globals().update(_API)
    return module


def verify(target, **kwargs):
    """tangle.verify.verify: capture, relate, check; returns a VerifyResult (raises VerifyError on bad input)."""
    return _verify_module().verify(target, **kwargs)


def check(relation_path, **kwargs):
    """tangle.verify.check: `tangle check RELATION --json`, parsed into a CheckResult."""
    return _verify_module().check(relation_path, **kwargs)


_API = dict(verify=verify, check=check)


def __getattr__(name):
    if name in ("VerifyResult", "CheckResult", "VerifyError", "Failure", "Parameter"):
        return getattr(_verify_module(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
