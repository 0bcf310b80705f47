class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[1, 4, 16]", arg1_1: "f32[4, 16]", arg2_1: "f32[2, 16]", arg3_1: "f32[2, 16]", arg4_1: "f32[16, 4]"):
        # File: /models/gqa_model.py:33 in attn, code: q = (x @ wq.t()).view(b, s, -1, HEAD_DIM).transpose(1, 2)
        t: "f32[16, 4]" = torch.ops.aten.t.default(arg1_1);  arg1_1 = None
        view: "f32[4, 16]" = torch.ops.aten.view.default(arg0_1, [4, 16])
        mm: "f32[4, 4]" = torch.ops.aten.mm.default(view, t);  view = t = None
        _unsafe_view: "f32[1, 4, 4]" = torch.ops.aten._unsafe_view.default(mm, [1, 4, 4]);  mm = None
        view_1: "f32[1, 4, 2, 2]" = torch.ops.aten.view.default(_unsafe_view, [1, 4, -1, 2]);  _unsafe_view = None
        transpose: "f32[1, 2, 4, 2]" = torch.ops.aten.transpose.int(view_1, 1, 2);  view_1 = None

        # File: /models/gqa_model.py:34 in attn, code: k = (x @ wk.t()).view(b, s, -1, HEAD_DIM).transpose(1, 2)
        t_1: "f32[16, 2]" = torch.ops.aten.t.default(arg2_1);  arg2_1 = None
        view_2: "f32[4, 16]" = torch.ops.aten.view.default(arg0_1, [4, 16])
        mm_1: "f32[4, 2]" = torch.ops.aten.mm.default(view_2, t_1);  view_2 = t_1 = None
        _unsafe_view_1: "f32[1, 4, 2]" = torch.ops.aten._unsafe_view.default(mm_1, [1, 4, 2]);  mm_1 = None
        view_3: "f32[1, 4, 1, 2]" = torch.ops.aten.view.default(_unsafe_view_1, [1, 4, -1, 2]);  _unsafe_view_1 = None
        transpose_1: "f32[1, 1, 4, 2]" = torch.ops.aten.transpose.int(view_3, 1, 2);  view_3 = None

        # File: /models/gqa_model.py:35 in attn, code: v = (x @ wv.t()).view(b, s, -1, HEAD_DIM).transpose(1, 2)
        t_2: "f32[16, 2]" = torch.ops.aten.t.default(arg3_1);  arg3_1 = None
        view_4: "f32[4, 16]" = torch.ops.aten.view.default(arg0_1, [4, 16]);  arg0_1 = None
        mm_2: "f32[4, 2]" = torch.ops.aten.mm.default(view_4, t_2);  view_4 = t_2 = None
        _unsafe_view_2: "f32[1, 4, 2]" = torch.ops.aten._unsafe_view.default(mm_2, [1, 4, 2]);  mm_2 = None
        view_5: "f32[1, 4, 1, 2]" = torch.ops.aten.view.default(_unsafe_view_2, [1, 4, -1, 2]);  _unsafe_view_2 = None
        transpose_2: "f32[1, 1, 4, 2]" = torch.ops.aten.transpose.int(view_5, 1, 2);  view_5 = None

        # File: /models/gqa_model.py:37 in attn, code: a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        _scaled_dot_product_flash_attention_for_cpu = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(transpose, transpose_1, transpose_2, 0.0, True);  transpose = transpose_1 = transpose_2 = None
        getitem: "f32[1, 2, 4, 2]" = _scaled_dot_product_flash_attention_for_cpu[0];  _scaled_dot_product_flash_attention_for_cpu = None

        # File: /models/gqa_model.py:43 in attn, code: return a.transpose(1, 2).reshape(b, s, -1) @ wo.t()
        transpose_3: "f32[1, 4, 2, 2]" = torch.ops.aten.transpose.int(getitem, 1, 2);  getitem = None
        view_6: "f32[1, 4, 4]" = torch.ops.aten.view.default(transpose_3, [1, 4, -1]);  transpose_3 = None
        t_3: "f32[4, 16]" = torch.ops.aten.t.default(arg4_1);  arg4_1 = None
        view_7: "f32[4, 4]" = torch.ops.aten.view.default(view_6, [4, 4]);  view_6 = None
        mm_3: "f32[4, 16]" = torch.ops.aten.mm.default(view_7, t_3);  view_7 = t_3 = None
        _unsafe_view_3: "f32[1, 4, 16]" = torch.ops.aten._unsafe_view.default(mm_3, [1, 4, 16]);  mm_3 = None

        # File: /root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/distributed/_functional_collectives.py:179 in all_reduce, code: tensor = torch.ops._c10d_functional.all_reduce(
        all_reduce: "f32[1, 4, 16]" = torch.ops._c10d_functional.all_reduce.default(_unsafe_view_3, 'sum', '0');  _unsafe_view_3 = None

        # File: /root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor: "f32[1, 4, 16]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce);  all_reduce = None
        return (wait_tensor,)
