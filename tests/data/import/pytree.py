import torch
from torch import device

f32: type
fx_pytree: type


# Graph[rank=0](both, gid=1)
class joint_helper(torch.nn.Module):
    def forward(self, primals, tangents):
        primals_1: "f32[1]"; primals_2: "f32[1]"; tangents_1: "f32[1]"; 
    
        primals_1, primals_2, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)
        # File: /src/loss.py:3 in f, code: return a * b
        mul: "f32[1]" = torch.ops.aten.mul.Tensor(tangents_1, primals_2);  primals_2 = None
        mul_1: "f32[1]" = torch.ops.aten.mul.Tensor(tangents_1, primals_1);  tangents_1 = primals_1 = None
        return pytree.tree_unflatten([mul, mul_1, None], self._out_spec)
        
