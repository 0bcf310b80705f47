class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[1, 2, 4, 4]", arg1_1: "f32[1, 2, 4, 4]", arg2_1: "f32[1, 2, 4, 4]", arg3_1: "f32[1, 2, 4, 4]"):
        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:438 in _templated_ring_attention, code: next_kv = torch.cat([key.flatten(), value.flatten()])
        view: "f32[32]" = torch.ops.aten.view.default(arg0_1, [32])
        view_1: "f32[32]" = torch.ops.aten.view.default(arg1_1, [32])
        cat: "f32[64]" = torch.ops.aten.cat.default([view, view_1]);  view = view_1 = None

        # File: torch/distributed/_functional_collectives.py:209 in all_gather_single, code: tensor = torch.ops._c10d_functional.all_gather_into_tensor(
        all_gather_into_tensor: "f32[128]" = torch.ops._c10d_functional.all_gather_into_tensor.default(cat, 2, '0');  cat = None

        # File: torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor: "f32[128]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor);  all_gather_into_tensor = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:475 in _templated_ring_attention, code: out, logsumexp, *rest = op(
        _scaled_dot_product_flash_attention_for_cpu = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg2_1, arg0_1, arg1_1)
        getitem: "f32[1, 2, 4, 4]" = _scaled_dot_product_flash_attention_for_cpu[0]
        getitem_1: "f32[1, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu[1];  _scaled_dot_product_flash_attention_for_cpu = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:158 in _merge_one, code: block_lse = block_lse.unsqueeze(dim=-1)
        unsqueeze: "f32[1, 2, 4, 1]" = torch.ops.aten.unsqueeze.default(getitem_1, -1);  getitem_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:300 in next_buffer, code: return self._aggregated_buffer.chunk(dist.get_world_size(self._pg))[idx]
        split = torch.ops.aten.split.Tensor(wait_tensor, 64);  wait_tensor = None
        getitem_3: "f32[64]" = split[1];  split = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:433 in _templated_ring_attention, code: key = next_kv[: key.numel()].reshape(key.shape)
        slice_1: "f32[32]" = torch.ops.aten.slice.Tensor(getitem_3, 0, 0, 32)
        view_2: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_1, [1, 2, 4, 4]);  slice_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:434 in _templated_ring_attention, code: value = next_kv[key.numel() :].reshape(value.shape)
        slice_2: "f32[32]" = torch.ops.aten.slice.Tensor(getitem_3, 0, 32, 9223372036854775807);  getitem_3 = None
        view_3: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_2, [1, 2, 4, 4]);  slice_2 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:475 in _templated_ring_attention, code: out, logsumexp, *rest = op(
        _scaled_dot_product_flash_attention_for_cpu_1 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg2_1, view_2, view_3);  view_2 = view_3 = None
        getitem_4: "f32[1, 2, 4, 4]" = _scaled_dot_product_flash_attention_for_cpu_1[0]
        getitem_5: "f32[1, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu_1[1];  _scaled_dot_product_flash_attention_for_cpu_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:158 in _merge_one, code: block_lse = block_lse.unsqueeze(dim=-1)
        unsqueeze_1: "f32[1, 2, 4, 1]" = torch.ops.aten.unsqueeze.default(getitem_5, -1);  getitem_5 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:186 in _merge_one, code: out = out - F.sigmoid(block_lse - lse) * (out - block_out)
        sub: "f32[1, 2, 4, 1]" = torch.ops.aten.sub.Tensor(unsqueeze_1, unsqueeze)
        sigmoid: "f32[1, 2, 4, 1]" = torch.ops.aten.sigmoid.default(sub);  sub = None
        sub_1: "f32[1, 2, 4, 4]" = torch.ops.aten.sub.Tensor(getitem, getitem_4);  getitem_4 = None
        mul: "f32[1, 2, 4, 4]" = torch.ops.aten.mul.Tensor(sigmoid, sub_1);  sigmoid = sub_1 = None
        sub_2: "f32[1, 2, 4, 4]" = torch.ops.aten.sub.Tensor(getitem, mul);  getitem = mul = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:187 in _merge_one, code: lse = lse - F.logsigmoid(lse - block_lse)
        sub_3: "f32[1, 2, 4, 1]" = torch.ops.aten.sub.Tensor(unsqueeze, unsqueeze_1);  unsqueeze_1 = None
        log_sigmoid_forward = torch.ops.aten.log_sigmoid_forward.default(sub_3);  sub_3 = None
        getitem_6: "f32[1, 2, 4, 1]" = log_sigmoid_forward[0];  log_sigmoid_forward = None
        sub_4: "f32[1, 2, 4, 1]" = torch.ops.aten.sub.Tensor(unsqueeze, getitem_6);  unsqueeze = getitem_6 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:226 in results, code: lse = self._lse.squeeze(-1).to(self._lse_dtype)
        squeeze: "f32[1, 2, 4]" = torch.ops.aten.squeeze.dim(sub_4, -1);  sub_4 = None

        # File: /models/ring_backward_model.py:60 in step, code: dq, dk, dv = _sdpa_backward(dout, q, k, v, out, lse, 0.0, causal)
        _scaled_dot_product_flash_attention_for_cpu_backward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default(arg3_1, arg2_1, arg0_1, arg1_1, sub_2, squeeze, 0.0, False);  arg3_1 = arg2_1 = arg0_1 = arg1_1 = None
        getitem_8: "f32[1, 2, 4, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward[0]
        getitem_9: "f32[1, 2, 4, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward[1]
        getitem_10: "f32[1, 2, 4, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward[2];  _scaled_dot_product_flash_attention_for_cpu_backward = None
        return (sub_2, squeeze, getitem_8, getitem_9, getitem_10)
