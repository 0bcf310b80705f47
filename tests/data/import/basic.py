# A small hand-written dump in the torch.fx print_readable() layout.

import torch
from torch import device

f32: type
i64: type
Sym: type


# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[8, 16]", w: "f32[16, 4]", ids: "i64[s0, 8]", n: "Sym(s0)", step: "i64[]"):
        # File: /src/model.py:10 in forward, code: y = x @ w
        mm: "f32[8, 4]" = torch.ops.aten.mm.default(x, w);  w = None
        
        # File: /src/model.py:11 in forward, code: y = dropout(y)
        native_dropout = torch.ops.aten.native_dropout.default(mm, 0.1, True)
        getitem: "f32[8, 4]" = native_dropout[0]
        getitem_1: "b8[8, 4]" = native_dropout[1];  native_dropout = None
        
        # File: /src/model.py:12 in forward, code: literals
        _tensor_constant0 = self._tensor_constant0
        full: "f32[8, 4]" = torch.ops.aten.full.default([8, 4], -inf, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0), pin_memory = False)
        slice_1: "f32[8, 4]" = torch.ops.aten.slice.Tensor(getitem, 1, 0, 9223372036854775807)
        clamp: "f32[8, 4]" = torch.ops.aten.clamp.default(slice_1, -1.5, 1e-05)
        cat: "f32[8, 8]" = torch.ops.aten.cat.default([clamp, full], -1);  clamp = full = None
        layer_norm: "f32[8, 8]" = torch.ops.aten.native_layer_norm.default(cat, [8], None, None, 1e-05)
        masked: "f32[8, 8]" = torch.ops.my_ns.custom_thing.default(layer_norm, (1, (2, 3)), 'name\'s', mode = "x", keep = False, eps = nan, memory_format = torch.contiguous_format)
        # No stacktrace found for following nodes
        all_reduce: "f32[8, 8]" = torch.ops._c10d_functional.all_reduce.default(masked, 'sum', '12')
        wait_tensor: "f32[8, 8]" = torch.ops._c10d_functional.wait_tensor(all_reduce);  all_reduce = None
        emb: "f32[s0, 8, 4]" = torch.ops.aten.embedding.default(mm, ids)
        return (wait_tensor, None, getitem_1, emb)
        
