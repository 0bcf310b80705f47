class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[4, 4]", arg1_1: "f32[4]", arg2_1: "f32[4, 4]", arg3_1: "f32[4]", arg4_1: "f32[8, 4]", arg5_1: "f32[8, 4]", arg6_1: "f32[4, 8]"):
        # File: /models/replicated_model.py:25 in norm, code: return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w
        pow_1: "f32[4, 4]" = torch.ops.aten.pow.Tensor_Scalar(arg0_1, 2)
        mean: "f32[4, 1]" = torch.ops.aten.mean.dim(pow_1, [-1], True);  pow_1 = None
        add: "f32[4, 1]" = torch.ops.aten.add.Tensor(mean, 1e-05);  mean = None
        rsqrt: "f32[4, 1]" = torch.ops.aten.rsqrt.default(add);  add = None
        mul: "f32[4, 4]" = torch.ops.aten.mul.Tensor(arg0_1, rsqrt);  rsqrt = None
        mul_1: "f32[4, 4]" = torch.ops.aten.mul.Tensor(mul, arg1_1);  mul = arg1_1 = None

        # File: /models/replicated_model.py:29 in block, code: h = x + norm(x, wa) @ wr
        mm: "f32[4, 4]" = torch.ops.aten.mm.default(mul_1, arg2_1);  mul_1 = arg2_1 = None
        add_1: "f32[4, 4]" = torch.ops.aten.add.Tensor(arg0_1, mm);  arg0_1 = mm = None

        # File: /models/replicated_model.py:25 in norm, code: return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w
        pow_2: "f32[4, 4]" = torch.ops.aten.pow.Tensor_Scalar(add_1, 2)
        mean_1: "f32[4, 1]" = torch.ops.aten.mean.dim(pow_2, [-1], True);  pow_2 = None
        add_2: "f32[4, 1]" = torch.ops.aten.add.Tensor(mean_1, 1e-05);  mean_1 = None
        rsqrt_1: "f32[4, 1]" = torch.ops.aten.rsqrt.default(add_2);  add_2 = None
        mul_2: "f32[4, 4]" = torch.ops.aten.mul.Tensor(add_1, rsqrt_1);  rsqrt_1 = None
        mul_3: "f32[4, 4]" = torch.ops.aten.mul.Tensor(mul_2, arg3_1);  mul_2 = arg3_1 = None

        # File: /models/replicated_model.py:31 in block, code: y = (torch.nn.functional.silu(n @ wg.t()) * (n @ wu.t())) @ wd.t()
        t: "f32[4, 8]" = torch.ops.aten.t.default(arg4_1);  arg4_1 = None
        mm_1: "f32[4, 8]" = torch.ops.aten.mm.default(mul_3, t);  t = None
        silu: "f32[4, 8]" = torch.ops.aten.silu.default(mm_1);  mm_1 = None
        t_1: "f32[4, 8]" = torch.ops.aten.t.default(arg5_1);  arg5_1 = None
        mm_2: "f32[4, 8]" = torch.ops.aten.mm.default(mul_3, t_1);  mul_3 = t_1 = None
        mul_4: "f32[4, 8]" = torch.ops.aten.mul.Tensor(silu, mm_2);  silu = mm_2 = None
        t_2: "f32[8, 4]" = torch.ops.aten.t.default(arg6_1);  arg6_1 = None
        mm_3: "f32[4, 4]" = torch.ops.aten.mm.default(mul_4, t_2);  mul_4 = t_2 = None

        # File: /models/replicated_model.py:34 in block, code: return h + y
        add_3: "f32[4, 4]" = torch.ops.aten.add.Tensor(add_1, mm_3);  add_1 = mm_3 = None
        return (add_3,)
