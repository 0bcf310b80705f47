class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[3, 4]", arg1_1: "f32[3, 4]", arg2_1: "f32[4, 3]"):
        # File: /models/pad_model.py:18 in mlp, code: return torch.relu(x @ w1.t()) @ w2.t()
        t: "f32[4, 3]" = torch.ops.aten.t.default(arg0_1);  arg0_1 = None
        mm: "f32[3, 3]" = torch.ops.aten.mm.default(arg1_1, t);  arg1_1 = t = None
        relu: "f32[3, 3]" = torch.ops.aten.relu.default(mm);  mm = None
        t_1: "f32[3, 4]" = torch.ops.aten.t.default(arg2_1);  arg2_1 = None
        mm_1: "f32[3, 4]" = torch.ops.aten.mm.default(relu, t_1);  relu = t_1 = None

        # File: /root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/distributed/_functional_collectives.py:179 in all_reduce, code: tensor = torch.ops._c10d_functional.all_reduce(
        all_reduce: "f32[3, 4]" = torch.ops._c10d_functional.all_reduce.default(mm_1, 'sum', '0');  mm_1 = None

        # File: /root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor: "f32[3, 4]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce);  all_reduce = None
        return (wait_tensor,)
