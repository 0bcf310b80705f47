"""Relations for a parameter split into pieces that are replicated over groups of ranks.

GQA with a TP degree above the number of kv heads stores kv head g on every rank of a
group (2 kv heads, TP=4: ranks 0,1 hold head 0, ranks 2,3 head 1). The spec weight is
then the concat of one copy of each piece, for every way of picking one holder per piece:
``S.wk = concat(D0.wk, D2.wk, dim=0)`` and ``S.wk = concat(D1.wk, D3.wk, dim=0)``. Both
statements are written (the i-th holder of every piece together), so the checker learns
that the ranks of one group hold equal tensors.
"""
from __future__ import annotations


def piece_holders(world_size: int, pieces: int) -> list[int]:
    """The piece each rank holds when consecutive ranks share one (rank // (world_size / pieces))."""
    if pieces <= 0 or world_size % pieces:
        raise ValueError(f"{pieces} pieces cannot be replicated evenly over {world_size} ranks")
    per = world_size // pieces
    return [r // per for r in range(world_size)]


def replicated_shard(spec_name: str, impl_name: str, dim: int, holders: list[int]) -> list[str]:
    """Relation lines for a spec tensor whose piece ``holders[r]`` (along dim) rank r holds.

    Every piece must be held by the same number of ranks; a single holder per piece is an
    ordinary ``shard``."""
    pieces = sorted(set(holders))
    if pieces != list(range(len(pieces))):
        raise ValueError(f"holders {holders} do not name pieces 0..{len(pieces) - 1}")
    by_piece = [[r for r, p in enumerate(holders) if p == i] for i in pieces]
    copies = len(by_piece[0])
    if any(len(rs) != copies for rs in by_piece):
        raise ValueError(f"holders {holders}: every piece needs as many ranks")
    lines = []
    for c in range(copies):
        parts = ", ".join(f"D{rs[c]}.{impl_name}" for rs in by_piece)
        lines.append(f"S.{spec_name} = concat({parts}, dim={dim})" if len(by_piece) > 1 else
                     f"S.{spec_name} = D{by_piece[0][c]}.{impl_name}")
    return lines
