# The rows of x whose m is above a threshold (nonzero: an unbacked row count), times w.
class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[8]", arg1_1: "f32[8, 4]", arg2_1: "f32[4, 2]"):
        # File: rows_model.py:5 in rows, code: where = (m > 1).nonzero()
        gt: "b8[8]" = torch.ops.aten.gt.Scalar(arg0_1, 1);  arg0_1 = None
        nonzero: "i64[u0, 1]" = torch.ops.aten.nonzero.default(gt);  gt = None
        sym_size_int: "Sym(u0)" = torch.ops.aten.sym_size.int(nonzero, 0)
        ge: "Sym(u0 >= 0)" = sym_size_int >= 0
        _assert_scalar = torch.ops.aten._assert_scalar.default(ge, "Runtime assertion failed for expression u0 >= 0 on node 'ge'");  ge = _assert_scalar = None

        # File: rows_model.py:6 in rows, code: return x[where, :].view(-1, 4) @ w
        index: "f32[u0, 1, 4]" = torch.ops.aten.index.Tensor(arg1_1, [nonzero]);  arg1_1 = nonzero = None
        view: "f32[u0, 4]" = torch.ops.aten.view.default(index, [sym_size_int, 4]);  index = sym_size_int = None
        mm: "f32[u0, 2]" = torch.ops.aten.mm.default(view, arg2_1);  view = arg2_1 = None
        return (mm,)
