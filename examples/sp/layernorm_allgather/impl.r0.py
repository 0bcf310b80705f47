import torch
from torch import device

f32: type


# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 2, 6]", weight: "f32[6]", bias: "f32[6]"):
        # File: /models/block.py:52 in forward, code: h = self.norm(x)
        native_layer_norm = torch.ops.aten.native_layer_norm.default(x, [6], weight, bias, 1e-05);  x = weight = bias = None
        getitem: "f32[4, 2, 6]" = native_layer_norm[0]
        getitem_1: "f32[4, 2, 1]" = native_layer_norm[1]
        getitem_2: "f32[4, 2, 1]" = native_layer_norm[2];  native_layer_norm = None
        
        # File: /models/block_sp.py:61 in forward, code: h = gather_from_sequence_parallel_region(h)
        all_gather_into_tensor: "f32[8, 2, 6]" = torch.ops._c10d_functional.all_gather_into_tensor.default(getitem, 2, '0');  getitem = None
        wait_tensor: "f32[8, 2, 6]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor);  all_gather_into_tensor = None
        return (wait_tensor,)
        
