class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[4]", arg1_1: "f32[4, 4]", arg2_1: "f32[4]", arg3_1: "f32[4, 4]", arg4_1: "f32[4, 4]", arg5_1: "f32[4, 4]", arg6_1: "f32[2, 4]", arg7_1: "f32[2, 4]"):
        # File: /models/replicated_model.py:25 in norm, code: return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w
        pow_1: "f32[2, 4]" = torch.ops.aten.pow.Tensor_Scalar(arg6_1, 2)
        mean: "f32[2, 1]" = torch.ops.aten.mean.dim(pow_1, [-1], True);  pow_1 = None
        add: "f32[2, 1]" = torch.ops.aten.add.Tensor(mean, 1e-05);  mean = None
        rsqrt: "f32[2, 1]" = torch.ops.aten.rsqrt.default(add);  add = None
        mul: "f32[2, 4]" = torch.ops.aten.mul.Tensor(arg6_1, rsqrt);  rsqrt = None
        mul_1: "f32[2, 4]" = torch.ops.aten.mul.Tensor(mul, arg0_1);  mul = None

        # File: /models/replicated_model.py:29 in block, code: h = x + norm(x, wa) @ wr
        mm: "f32[2, 4]" = torch.ops.aten.mm.default(mul_1, arg1_1);  mul_1 = None
        add_1: "f32[2, 4]" = torch.ops.aten.add.Tensor(arg6_1, mm);  arg6_1 = mm = None

        # File: /models/replicated_model.py:25 in norm, code: return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w
        pow_2: "f32[2, 4]" = torch.ops.aten.pow.Tensor_Scalar(add_1, 2)
        mean_1: "f32[2, 1]" = torch.ops.aten.mean.dim(pow_2, [-1], True);  pow_2 = None
        add_2: "f32[2, 1]" = torch.ops.aten.add.Tensor(mean_1, 1e-05);  mean_1 = None
        rsqrt_1: "f32[2, 1]" = torch.ops.aten.rsqrt.default(add_2);  add_2 = None
        mul_2: "f32[2, 4]" = torch.ops.aten.mul.Tensor(add_1, rsqrt_1);  rsqrt_1 = None
        mul_3: "f32[2, 4]" = torch.ops.aten.mul.Tensor(mul_2, arg2_1);  mul_2 = None

        # File: /models/replicated_model.py:31 in block, code: y = (torch.nn.functional.silu(n @ wg.t()) * (n @ wu.t())) @ wd.t()
        t: "f32[4, 4]" = torch.ops.aten.t.default(arg3_1)
        mm_1: "f32[2, 4]" = torch.ops.aten.mm.default(mul_3, t);  t = None
        silu: "f32[2, 4]" = torch.ops.aten.silu.default(mm_1);  mm_1 = None
        t_1: "f32[4, 4]" = torch.ops.aten.t.default(arg4_1)
        mm_2: "f32[2, 4]" = torch.ops.aten.mm.default(mul_3, t_1);  mul_3 = t_1 = None
        mul_4: "f32[2, 4]" = torch.ops.aten.mul.Tensor(silu, mm_2);  silu = mm_2 = None
        t_2: "f32[4, 4]" = torch.ops.aten.t.default(arg5_1)
        mm_3: "f32[2, 4]" = torch.ops.aten.mm.default(mul_4, t_2);  mul_4 = t_2 = None

        # File: /root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/distributed/_functional_collectives.py:179 in all_reduce, code: tensor = torch.ops._c10d_functional.all_reduce(
        all_reduce: "f32[2, 4]" = torch.ops._c10d_functional.all_reduce.default(mm_3, 'sum', '0');  mm_3 = None

        # File: /root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor: "f32[2, 4]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce);  all_reduce = None

        # File: /models/replicated_model.py:34 in block, code: return h + y
        add_3: "f32[2, 4]" = torch.ops.aten.add.Tensor(add_1, wait_tensor);  add_1 = wait_tensor = None

        # File: /models/replicated_model.py:25 in norm, code: return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w
        pow_3: "f32[2, 4]" = torch.ops.aten.pow.Tensor_Scalar(arg7_1, 2)
        mean_2: "f32[2, 1]" = torch.ops.aten.mean.dim(pow_3, [-1], True);  pow_3 = None
        add_4: "f32[2, 1]" = torch.ops.aten.add.Tensor(mean_2, 1e-05);  mean_2 = None
        rsqrt_2: "f32[2, 1]" = torch.ops.aten.rsqrt.default(add_4);  add_4 = None
        mul_5: "f32[2, 4]" = torch.ops.aten.mul.Tensor(arg7_1, rsqrt_2);  rsqrt_2 = None
        mul_6: "f32[2, 4]" = torch.ops.aten.mul.Tensor(mul_5, arg0_1);  mul_5 = arg0_1 = None

        # File: /models/replicated_model.py:29 in block, code: h = x + norm(x, wa) @ wr
        mm_4: "f32[2, 4]" = torch.ops.aten.mm.default(mul_6, arg1_1);  mul_6 = arg1_1 = None
        add_5: "f32[2, 4]" = torch.ops.aten.add.Tensor(arg7_1, mm_4);  arg7_1 = mm_4 = None

        # File: /models/replicated_model.py:25 in norm, code: return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w
        pow_4: "f32[2, 4]" = torch.ops.aten.pow.Tensor_Scalar(add_5, 2)
        mean_3: "f32[2, 1]" = torch.ops.aten.mean.dim(pow_4, [-1], True);  pow_4 = None
        add_6: "f32[2, 1]" = torch.ops.aten.add.Tensor(mean_3, 1e-05);  mean_3 = None
        rsqrt_3: "f32[2, 1]" = torch.ops.aten.rsqrt.default(add_6);  add_6 = None
        mul_7: "f32[2, 4]" = torch.ops.aten.mul.Tensor(add_5, rsqrt_3);  rsqrt_3 = None
        mul_8: "f32[2, 4]" = torch.ops.aten.mul.Tensor(mul_7, arg2_1);  mul_7 = arg2_1 = None

        # File: /models/replicated_model.py:31 in block, code: y = (torch.nn.functional.silu(n @ wg.t()) * (n @ wu.t())) @ wd.t()
        t_3: "f32[4, 4]" = torch.ops.aten.t.default(arg3_1);  arg3_1 = None
        mm_5: "f32[2, 4]" = torch.ops.aten.mm.default(mul_8, t_3);  t_3 = None
        silu_1: "f32[2, 4]" = torch.ops.aten.silu.default(mm_5);  mm_5 = None
        t_4: "f32[4, 4]" = torch.ops.aten.t.default(arg4_1);  arg4_1 = None
        mm_6: "f32[2, 4]" = torch.ops.aten.mm.default(mul_8, t_4);  mul_8 = t_4 = None
        mul_9: "f32[2, 4]" = torch.ops.aten.mul.Tensor(silu_1, mm_6);  silu_1 = mm_6 = None
        t_5: "f32[4, 4]" = torch.ops.aten.t.default(arg5_1);  arg5_1 = None
        mm_7: "f32[2, 4]" = torch.ops.aten.mm.default(mul_9, t_5);  mul_9 = t_5 = None

        # File: /root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/distributed/_functional_collectives.py:179 in all_reduce, code: tensor = torch.ops._c10d_functional.all_reduce(
        all_reduce_1: "f32[2, 4]" = torch.ops._c10d_functional.all_reduce.default(mm_7, 'sum', '0');  mm_7 = None

        # File: /root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor_1: "f32[2, 4]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce_1);  all_reduce_1 = None

        # File: /models/replicated_model.py:34 in block, code: return h + y
        add_7: "f32[2, 4]" = torch.ops.aten.add.Tensor(add_5, wait_tensor_1);  add_5 = wait_tensor_1 = None
        return (add_3, add_7)
