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

        # File: /models/gqa_model.py:28 in repeat_kv, code: return t[:, :, None, :, :].expand(b, kv, n, s, d).reshape(b, kv * n, s, d)
        unsqueeze: "f32[1, 1, 1, 4, 2]" = torch.ops.aten.unsqueeze.default(transpose_1, 2);  transpose_1 = None
        expand: "f32[1, 1, 2, 4, 2]" = torch.ops.aten.expand.default(unsqueeze, [1, 1, 2, 4, 2]);  unsqueeze = None
        view_6: "f32[1, 2, 4, 2]" = torch.ops.aten.view.default(expand, [1, 2, 4, 2]);  expand = None
        unsqueeze_1: "f32[1, 1, 1, 4, 2]" = torch.ops.aten.unsqueeze.default(transpose_2, 2);  transpose_2 = None
        expand_1: "f32[1, 1, 2, 4, 2]" = torch.ops.aten.expand.default(unsqueeze_1, [1, 1, 2, 4, 2]);  unsqueeze_1 = None
        view_7: "f32[1, 2, 4, 2]" = torch.ops.aten.view.default(expand_1, [1, 2, 4, 2]);  expand_1 = None

        # File: /models/gqa_model.py:41 in attn, code: w = torch.softmax(q @ k.transpose(2, 3) * HEAD_DIM ** -0.5, dim=-1)
        transpose_3: "f32[1, 2, 2, 4]" = torch.ops.aten.transpose.int(view_6, 2, 3);  view_6 = None
        expand_2: "f32[1, 2, 4, 2]" = torch.ops.aten.expand.default(transpose, [1, 2, 4, 2]);  transpose = None
        view_8: "f32[2, 4, 2]" = torch.ops.aten.view.default(expand_2, [2, 4, 2]);  expand_2 = None
        expand_3: "f32[1, 2, 2, 4]" = torch.ops.aten.expand.default(transpose_3, [1, 2, 2, 4]);  transpose_3 = None
        view_9: "f32[2, 2, 4]" = torch.ops.aten.view.default(expand_3, [2, 2, 4]);  expand_3 = None
        bmm: "f32[2, 4, 4]" = torch.ops.aten.bmm.default(view_8, view_9);  view_8 = view_9 = None
        view_10: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(bmm, [1, 2, 4, 4]);  bmm = None
        mul: "f32[1, 2, 4, 4]" = torch.ops.aten.mul.Tensor(view_10, 0.7071067811865476);  view_10 = None
        _softmax: "f32[1, 2, 4, 4]" = torch.ops.aten._softmax.default(mul, -1, False);  mul = None

        # File: /models/gqa_model.py:42 in attn, code: a = w @ v
        expand_4: "f32[1, 2, 4, 4]" = torch.ops.aten.expand.default(_softmax, [1, 2, 4, 4]);  _softmax = None
        view_11: "f32[2, 4, 4]" = torch.ops.aten.view.default(expand_4, [2, 4, 4]);  expand_4 = None
        expand_5: "f32[1, 2, 4, 2]" = torch.ops.aten.expand.default(view_7, [1, 2, 4, 2]);  view_7 = None
        view_12: "f32[2, 4, 2]" = torch.ops.aten.view.default(expand_5, [2, 4, 2]);  expand_5 = None
        bmm_1: "f32[2, 4, 2]" = torch.ops.aten.bmm.default(view_11, view_12);  view_11 = view_12 = None
        view_13: "f32[1, 2, 4, 2]" = torch.ops.aten.view.default(bmm_1, [1, 2, 4, 2]);  bmm_1 = None

        # File: /models/gqa_model.py:43 in attn, code: return a.transpose(1, 2).reshape(b, s, -1) @ wo.t()
        transpose_4: "f32[1, 4, 2, 2]" = torch.ops.aten.transpose.int(view_13, 1, 2);  view_13 = None
        clone: "f32[1, 4, 2, 2]" = torch.ops.aten.clone.default(transpose_4, memory_format = torch.contiguous_format);  transpose_4 = None
        _unsafe_view_3: "f32[1, 4, 4]" = torch.ops.aten._unsafe_view.default(clone, [1, 4, 4]);  clone = None
        t_3: "f32[4, 16]" = torch.ops.aten.t.default(arg4_1);  arg4_1 = None
        view_14: "f32[4, 4]" = torch.ops.aten.view.default(_unsafe_view_3, [4, 4]);  _unsafe_view_3 = None
        mm_3: "f32[4, 16]" = torch.ops.aten.mm.default(view_14, t_3);  view_14 = t_3 = None
        _unsafe_view_4: "f32[1, 4, 16]" = torch.ops.aten._unsafe_view.default(mm_3, [1, 4, 16]);  mm_3 = None

        # File: /root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/distributed/_functional_collectives.py:179 in all_reduce, code: tensor = torch.ops._c10d_functional.all_reduce(
        all_reduce: "f32[1, 4, 16]" = torch.ops._c10d_functional.all_reduce.default(_unsafe_view_4, 'sum', '0');  _unsafe_view_4 = None

        # File: /root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor: "f32[1, 4, 16]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce);  all_reduce = None
        return (wait_tensor,)
