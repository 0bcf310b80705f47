"""Python side of tangle (no verification logic here).

* ``tangle.capture``: capture ATen-level FX graphs from PyTorch programs.
* ``tangle.relfile``: read a relation file's header (spec, impl, ranks, lemmas, ``# expect:``).
* ``tangle.binary``: find the ``tangle`` CLI (``--tangle`` path, ``$TANGLE_BIN``, ``build/bin/tangle``).
"""
