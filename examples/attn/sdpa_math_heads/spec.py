import torch
from torch import device

f32: type


# sdpa math path (torch.nn.attention.sdpa_kernel(SDPBackend.MATH)), heads spec.py
class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[1, 4, 4, 2]", arg1_1: "f32[1, 4, 4, 2]", arg2_1: "f32[1, 4, 4, 2]", arg3_1: "f32[1, 1, 4, 4]"):
        # No stacktrace found for following nodes
        mul: "f32[1, 4, 4, 2]" = torch.ops.aten.mul.Scalar(arg0_1, 0.7071067811865476);  arg0_1 = None
        transpose: "f32[1, 4, 2, 4]" = torch.ops.aten.transpose.int(arg1_1, -2, -1);  arg1_1 = None
        mul_1: "f32[1, 4, 2, 4]" = torch.ops.aten.mul.Scalar(transpose, 0.7071067811865476);  transpose = None
        expand: "f32[1, 4, 4, 2]" = torch.ops.aten.expand.default(mul, [1, 4, 4, 2]);  mul = None
        view: "f32[4, 4, 2]" = torch.ops.aten.view.default(expand, [4, 4, 2]);  expand = None
        expand_1: "f32[1, 4, 2, 4]" = torch.ops.aten.expand.default(mul_1, [1, 4, 2, 4]);  mul_1 = None
        view_1: "f32[4, 2, 4]" = torch.ops.aten.view.default(expand_1, [4, 2, 4]);  expand_1 = None
        bmm: "f32[4, 4, 4]" = torch.ops.aten.bmm.default(view, view_1);  view = view_1 = None
        view_2: "f32[1, 4, 4, 4]" = torch.ops.aten.view.default(bmm, [1, 4, 4, 4]);  bmm = None
        add: "f32[1, 4, 4, 4]" = torch.ops.aten.add.Tensor(view_2, arg3_1);  view_2 = arg3_1 = None
        _safe_softmax: "f32[1, 4, 4, 4]" = torch.ops.aten._safe_softmax.default(add, -1);  add = None
        expand_2: "f32[1, 4, 4, 4]" = torch.ops.aten.expand.default(_safe_softmax, [1, 4, 4, 4]);  _safe_softmax = None
        view_3: "f32[4, 4, 4]" = torch.ops.aten.view.default(expand_2, [4, 4, 4]);  expand_2 = None
        expand_3: "f32[1, 4, 4, 2]" = torch.ops.aten.expand.default(arg2_1, [1, 4, 4, 2]);  arg2_1 = None
        view_4: "f32[4, 4, 2]" = torch.ops.aten.view.default(expand_3, [4, 4, 2]);  expand_3 = None
        bmm_1: "f32[4, 4, 2]" = torch.ops.aten.bmm.default(view_3, view_4);  view_3 = view_4 = None
        view_5: "f32[1, 4, 4, 2]" = torch.ops.aten.view.default(bmm_1, [1, 4, 4, 2]);  bmm_1 = None
        return (view_5,)
