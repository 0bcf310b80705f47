import torch
from torch import device

f32: type


# Graph[rank=0](joint, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, q: "f32[1, 2, 4, 2]", k: "f32[1, 1, 4, 2]", v: "f32[1, 1, 4, 2]", m: "f32[1, 1, 4, 4]", go: "f32[1, 2, 4, 2]"):
        # File: /models/attn.py:10 in forward, code: out = F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.5, enable_gqa=True)
        fa = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, attn_mask = m, scale = 0.5)
        out: "f32[1, 2, 4, 2]" = fa[0]
        lse: "f32[1, 2, 4]" = fa[1];  fa = None

        # File: /models/attn.py:11 in backward, code: out.backward(go)
        bw = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default(go, q, k, v, out, lse, 0.0, False, attn_mask = m, scale = 0.5)
        dq: "f32[1, 2, 4, 2]" = bw[0]
        dk: "f32[1, 1, 4, 2]" = bw[1]
        dv: "f32[1, 1, 4, 2]" = bw[2];  bw = None
        return (out, dq, dk, dv)
        
