class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[1, 2, 8, 4]", arg1_1: "f32[1, 2, 8, 4]", arg2_1: "f32[1, 2, 8, 4]", arg3_1: "f32[1, 2, 8, 4]"):
        # File: /models/ring_backward_model.py:39 in step, code: out, lse = _sdpa(q, k, v, is_causal=causal)
        _scaled_dot_product_flash_attention_for_cpu = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, arg1_1, arg2_1, 0.0, True)
        getitem: "f32[1, 2, 8, 4]" = _scaled_dot_product_flash_attention_for_cpu[0]
        getitem_1: "f32[1, 2, 8]" = _scaled_dot_product_flash_attention_for_cpu[1];  _scaled_dot_product_flash_attention_for_cpu = None

        # File: /models/ring_backward_model.py:40 in step, code: dq, dk, dv = _sdpa_backward(dout, q, k, v, out, lse, 0.0, causal)
        _scaled_dot_product_flash_attention_for_cpu_backward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default(arg3_1, arg0_1, arg1_1, arg2_1, getitem, getitem_1, 0.0, True);  arg3_1 = arg0_1 = arg1_1 = arg2_1 = None
        getitem_2: "f32[1, 2, 8, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward[0]
        getitem_3: "f32[1, 2, 8, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward[1]
        getitem_4: "f32[1, 2, 8, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward[2];  _scaled_dot_product_flash_attention_for_cpu_backward = None
        return (getitem, getitem_1, getitem_2, getitem_3, getitem_4)
