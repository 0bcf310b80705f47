"""Relations for a parameter padded with zeros to a multiple of the degree (docs/relations.md,
"Zero padding").

A size that does not divide by the ranks is padded to the next multiple: 6 heads of 2 rows
over 4 ranks become 8 heads, 4 rows per rank, rank 3 holding padding only. The spec tensor is
then the first ``size`` rows of the ranks' concatenation, and each rank's rows past the real
ones are zero padding:

    S.wq = slice(shard(D*.wq, dim=0), dim=0, start=0, end=12)
    zero D3.wq

``zero`` is an assumption the checker trusts: pass the ranks' actual tensors (``values``) and a
region is declared only where they hold zeros, so a capture whose padding is not zero gets no
``zero`` line (and its check then fails where the padding leaks into the result).
"""
from __future__ import annotations


def per_rank(size: int, world_size: int, unit: int = 1) -> int:
    """Elements per rank along the padded dim: ``size`` (a multiple of ``unit``, e.g. a head's
    rows) padded to a multiple of ``unit * world_size``."""
    if size <= 0 or unit <= 0 or size % unit:
        raise ValueError(f"size {size} is not a positive multiple of the unit {unit}")
    return -(-(size // unit) // world_size) * unit


def pad_regions(size: int, world_size: int, dim: int, unit: int = 1) -> list[tuple[int, int, int] | None]:
    """Per rank: None (no padding) or (dim, start, end) of its padding, in its own tensor;
    start == 0 for a rank holding padding only."""
    per = per_rank(size, world_size, unit)
    out = []
    for r in range(world_size):
        real = max(0, min(per, size - r * per))
        out.append(None if real == per else (dim, real, per))
    return out


def _is_zero(value, region) -> bool:
    dim, start, end = region
    return bool((value.narrow(dim, start, end - start) == 0).all())


def padded_shard(spec_name: str, impl_name: str, dim: int, size: int, world_size: int, unit: int = 1,
                 values=None) -> list[str]:
    """Relation lines for spec tensor ``spec_name`` of ``size`` along ``dim``, sharded over the
    ranks' ``impl_name`` after padding (see the module docstring). ``values``: the ranks'
    tensors (torch), to declare only the regions that hold zeros; None declares every pad
    region (the caller vouches for it)."""
    per = per_rank(size, world_size, unit)
    if values is not None:
        if len(values) != world_size:
            raise ValueError(f"{len(values)} tensors for {world_size} ranks")
        bad = [r for r, v in enumerate(values) if v.shape[dim] != per]
        if bad:
            raise ValueError(f"rank {bad[0]}'s {impl_name} has {values[bad[0]].shape[dim]} elements along dim "
                             f"{dim}, not the padded {per}")
    shard = f"shard(D*.{impl_name}, dim={dim})"
    if per * world_size == size:
        return [f"S.{spec_name} = {shard}"]
    lines = [f"S.{spec_name} = slice({shard}, dim={dim}, start=0, end={size})"]
    for r, region in enumerate(pad_regions(size, world_size, dim, unit)):
        if region is None or (values is not None and not _is_zero(values[r], region)):
            continue
        _, start, end = region
        lines.append(f"zero D{r}.{impl_name}" if start == 0 else
                     f"zero slice(D{r}.{impl_name}, dim={dim}, start={start}, end={end})")
    return lines
