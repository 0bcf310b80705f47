"""Python side of tangle (no verification logic here).

* ``tangle.capture``: capture ATen-level FX graphs from PyTorch programs.
* ``tangle.hf``: capture an HF transformers causal LM and its tensor-parallel ranks, with a placeholder
  map per graph and a relation file (``python -m tangle.hf llama --tp 2 --layers 1 --out DIR``).
* ``tangle.relfile``: read a relation file's header (spec, impl, ranks, lemmas, ``# expect:``).
* ``tangle.binary``: find the ``tangle`` CLI (``--tangle`` path, ``$TANGLE_BIN``, ``build/bin/tangle``).
"""
