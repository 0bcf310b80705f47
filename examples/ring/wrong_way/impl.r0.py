class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[1, 2, 2, 4]", arg1_1: "f32[1, 2, 2, 4]", arg2_1: "f32[1, 2, 2, 4]"):
        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:438 in _templated_ring_attention, code: next_kv = torch.cat([key.flatten(), value.flatten()])
        view: "f32[16]" = torch.ops.aten.view.default(arg1_1, [16])
        view_1: "f32[16]" = torch.ops.aten.view.default(arg2_1, [16])
        cat: "f32[32]" = torch.ops.aten.cat.default([view, view_1]);  view = view_1 = None

        # File: torch/distributed/_functional_collectives.py:209 in all_gather_single, code: tensor = torch.ops._c10d_functional.all_gather_into_tensor(
        all_gather_into_tensor: "f32[128]" = torch.ops._c10d_functional.all_gather_into_tensor.default(cat, 4, '0');  cat = None

        # File: torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor: "f32[128]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor);  all_gather_into_tensor = wait_tensor = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:475 in _templated_ring_attention, code: out, logsumexp, *rest = op(
        _scaled_dot_product_flash_attention_for_cpu = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, arg1_1, arg2_1, 0.0, True);  arg0_1 = arg1_1 = arg2_1 = None
        getitem: "f32[1, 2, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu[0]
        getitem_1: "f32[1, 2, 2]" = _scaled_dot_product_flash_attention_for_cpu[1];  _scaled_dot_product_flash_attention_for_cpu = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:158 in _merge_one, code: block_lse = block_lse.unsqueeze(dim=-1)
        unsqueeze: "f32[1, 2, 2, 1]" = torch.ops.aten.unsqueeze.default(getitem_1, -1);  getitem_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:226 in results, code: lse = self._lse.squeeze(-1).to(self._lse_dtype)
        squeeze: "f32[1, 2, 2]" = torch.ops.aten.squeeze.dim(unsqueeze, -1);  unsqueeze = None
        return (getitem, squeeze)
