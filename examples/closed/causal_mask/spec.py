import torch
from torch import device

f32: type


# HF transformers' causal mask for one packed sequence (masking_utils), added to attention scores.
class GraphModule(torch.nn.Module):
    def forward(self, scores: "f32[1, 1, 6, 6]"):
        # File: /models/mask.py:3 in forward, code: position_ids = torch.arange(T) + 0
        arange: "i64[6]" = torch.ops.aten.arange.default(6, device = device(type='cpu'), pin_memory = False)
        add: "i64[6]" = torch.ops.aten.add.Tensor(arange, 0);  arange = None
        unsqueeze: "i64[1, 6]" = torch.ops.aten.unsqueeze.default(add, 0);  add = None

        # File: /models/mask.py:5 in forward, code: position_diff = torch.diff(position_ids, prepend=position_ids[:, :1] - 1, dim=-1)
        slice_1: "i64[1, 1]" = torch.ops.aten.slice.Tensor(unsqueeze, 1, 0, 1)
        sub: "i64[1, 1]" = torch.ops.aten.sub.Tensor(slice_1, 1);  slice_1 = None
        cat: "i64[1, 7]" = torch.ops.aten.cat.default([sub, unsqueeze], -1);  sub = None
        slice_2: "i64[1, 6]" = torch.ops.aten.slice.Tensor(cat, -1, 0, 6)
        slice_3: "i64[1, 6]" = torch.ops.aten.slice.Tensor(cat, -1, 1, 7);  cat = None
        sub_1: "i64[1, 6]" = torch.ops.aten.sub.Tensor(slice_3, slice_2);  slice_3 = slice_2 = None

        # File: /models/mask.py:6 in forward, code: packed_sequence_mask = (position_diff != 1).cumsum(-1)
        ne: "b8[1, 6]" = torch.ops.aten.ne.Scalar(sub_1, 1);  sub_1 = None
        cumsum: "i64[1, 6]" = torch.ops.aten.cumsum.default(ne, -1);  ne = None

        # File: /models/mask.py:8 in forward, code: q_idx, kv_idx = arange(T)[:, None], arange(T)[None, :]
        arange_1: "i64[1]" = torch.ops.aten.arange.default(1, device = device(type='cpu'), pin_memory = False)
        unsqueeze_1: "i64[1, 1]" = torch.ops.aten.unsqueeze.default(arange_1, 1);  arange_1 = None
        arange_2: "i64[6]" = torch.ops.aten.arange.default(6, device = device(type='cpu'), pin_memory = False)
        unsqueeze_2: "i64[6, 1]" = torch.ops.aten.unsqueeze.default(arange_2, 1)
        unsqueeze_3: "i64[1, 6]" = torch.ops.aten.unsqueeze.default(arange_2, 0);  arange_2 = None

        # File: /models/mask.py:9 in forward, code: causal = (kv_idx <= q_idx) & (packed[0, q_idx] == packed[0, kv_idx])
        le: "b8[6, 6]" = torch.ops.aten.le.Tensor(unsqueeze_3, unsqueeze_2)
        index: "i64[6, 1]" = torch.ops.aten.index.Tensor(cumsum, [unsqueeze_1, unsqueeze_2]);  unsqueeze_2 = None
        index_1: "i64[1, 6]" = torch.ops.aten.index.Tensor(cumsum, [unsqueeze_1, unsqueeze_3]);  cumsum = unsqueeze_1 = unsqueeze_3 = None
        eq: "b8[6, 6]" = torch.ops.aten.eq.Tensor(index, index_1);  index = index_1 = None
        bitwise_and: "b8[6, 6]" = torch.ops.aten.bitwise_and.Tensor(le, eq);  le = eq = None
        expand: "b8[1, 1, 6, 6]" = torch.ops.aten.expand.default(bitwise_and, [1, 1, 6, 6]);  bitwise_and = None

        # File: /models/mask.py:10 in forward, code: mask = torch.where(causal, 0.0, torch.finfo(torch.float32).min)
        scalar_tensor: "f32[]" = torch.ops.aten.scalar_tensor.default(0.0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'))
        scalar_tensor_1: "f32[]" = torch.ops.aten.scalar_tensor.default(-3.4028234663852886e+38, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'))
        where: "f32[1, 1, 6, 6]" = torch.ops.aten.where.self(expand, scalar_tensor, scalar_tensor_1);  expand = scalar_tensor = scalar_tensor_1 = None

        # File: /models/mask.py:11 in forward, code: scores = scores + mask
        add_1: "f32[1, 1, 6, 6]" = torch.ops.aten.add.Tensor(scores, where);  scores = where = None
        return (add_1,)
