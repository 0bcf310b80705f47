class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[1, 2, 2, 4]", arg1_1: "f32[1, 2, 2, 4]", arg2_1: "f32[1, 2, 2, 4]"):
        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:438 in _templated_ring_attention, code: next_kv = torch.cat([key.flatten(), value.flatten()])
        view: "f32[16]" = torch.ops.aten.view.default(arg1_1, [16])
        view_1: "f32[16]" = torch.ops.aten.view.default(arg2_1, [16])
        cat: "f32[32]" = torch.ops.aten.cat.default([view, view_1]);  view = view_1 = None

        # File: torch/distributed/_functional_collectives.py:209 in all_gather_single, code: tensor = torch.ops._c10d_functional.all_gather_into_tensor(
        all_gather_into_tensor: "f32[128]" = torch.ops._c10d_functional.all_gather_into_tensor.default(cat, 4, '0');  cat = None

        # File: torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor: "f32[128]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor);  all_gather_into_tensor = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:475 in _templated_ring_attention, code: out, logsumexp, *rest = op(
        _scaled_dot_product_flash_attention_for_cpu = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, arg1_1, arg2_1, 0.0, True);  arg1_1 = arg2_1 = None
        getitem: "f32[1, 2, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu[0]
        getitem_1: "f32[1, 2, 2]" = _scaled_dot_product_flash_attention_for_cpu[1];  _scaled_dot_product_flash_attention_for_cpu = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:158 in _merge_one, code: block_lse = block_lse.unsqueeze(dim=-1)
        unsqueeze: "f32[1, 2, 2, 1]" = torch.ops.aten.unsqueeze.default(getitem_1, -1);  getitem_1 = None

        # File: /models/ring_model.py:67 in next_buffer, code: return self._aggregated_buffer.chunk(size)[(dist.get_rank(self._pg) + self._idx) % size]
        split = torch.ops.aten.split.Tensor(wait_tensor, 32)
        getitem_2: "f32[32]" = split[0];  split = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:433 in _templated_ring_attention, code: key = next_kv[: key.numel()].reshape(key.shape)
        slice_1: "f32[16]" = torch.ops.aten.slice.Tensor(getitem_2, 0, 0, 16)
        view_2: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_1, [1, 2, 2, 4]);  slice_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:434 in _templated_ring_attention, code: value = next_kv[key.numel() :].reshape(value.shape)
        slice_2: "f32[16]" = torch.ops.aten.slice.Tensor(getitem_2, 0, 16, 9223372036854775807);  getitem_2 = None
        view_3: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_2, [1, 2, 2, 4]);  slice_2 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:475 in _templated_ring_attention, code: out, logsumexp, *rest = op(
        _scaled_dot_product_flash_attention_for_cpu_1 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, view_2, view_3);  view_2 = view_3 = None
        getitem_6: "f32[1, 2, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu_1[0]
        getitem_7: "f32[1, 2, 2]" = _scaled_dot_product_flash_attention_for_cpu_1[1];  _scaled_dot_product_flash_attention_for_cpu_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:158 in _merge_one, code: block_lse = block_lse.unsqueeze(dim=-1)
        unsqueeze_1: "f32[1, 2, 2, 1]" = torch.ops.aten.unsqueeze.default(getitem_7, -1);  getitem_7 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:186 in _merge_one, code: out = out - F.sigmoid(block_lse - lse) * (out - block_out)
        sub: "f32[1, 2, 2, 1]" = torch.ops.aten.sub.Tensor(unsqueeze_1, unsqueeze)
        sigmoid: "f32[1, 2, 2, 1]" = torch.ops.aten.sigmoid.default(sub);  sub = None
        sub_1: "f32[1, 2, 2, 4]" = torch.ops.aten.sub.Tensor(getitem, getitem_6);  getitem_6 = None
        mul: "f32[1, 2, 2, 4]" = torch.ops.aten.mul.Tensor(sigmoid, sub_1);  sigmoid = sub_1 = None
        sub_2: "f32[1, 2, 2, 4]" = torch.ops.aten.sub.Tensor(getitem, mul);  getitem = mul = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:187 in _merge_one, code: lse = lse - F.logsigmoid(lse - block_lse)
        sub_3: "f32[1, 2, 2, 1]" = torch.ops.aten.sub.Tensor(unsqueeze, unsqueeze_1);  unsqueeze_1 = None
        log_sigmoid_forward = torch.ops.aten.log_sigmoid_forward.default(sub_3);  sub_3 = None
        getitem_8: "f32[1, 2, 2, 1]" = log_sigmoid_forward[0];  log_sigmoid_forward = None
        sub_4: "f32[1, 2, 2, 1]" = torch.ops.aten.sub.Tensor(unsqueeze, getitem_8);  unsqueeze = getitem_8 = None

        # File: /models/ring_model.py:67 in next_buffer, code: return self._aggregated_buffer.chunk(size)[(dist.get_rank(self._pg) + self._idx) % size]
        split_1 = torch.ops.aten.split.Tensor(wait_tensor, 32)
        getitem_11: "f32[32]" = split_1[1];  split_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:433 in _templated_ring_attention, code: key = next_kv[: key.numel()].reshape(key.shape)
        slice_3: "f32[16]" = torch.ops.aten.slice.Tensor(getitem_11, 0, 0, 16)
        view_6: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_3, [1, 2, 2, 4]);  slice_3 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:434 in _templated_ring_attention, code: value = next_kv[key.numel() :].reshape(value.shape)
        slice_4: "f32[16]" = torch.ops.aten.slice.Tensor(getitem_11, 0, 16, 9223372036854775807);  getitem_11 = None
        view_7: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_4, [1, 2, 2, 4]);  slice_4 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:475 in _templated_ring_attention, code: out, logsumexp, *rest = op(
        _scaled_dot_product_flash_attention_for_cpu_2 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, view_6, view_7);  view_6 = view_7 = None
        getitem_14: "f32[1, 2, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu_2[0]
        getitem_15: "f32[1, 2, 2]" = _scaled_dot_product_flash_attention_for_cpu_2[1];  _scaled_dot_product_flash_attention_for_cpu_2 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:158 in _merge_one, code: block_lse = block_lse.unsqueeze(dim=-1)
        unsqueeze_2: "f32[1, 2, 2, 1]" = torch.ops.aten.unsqueeze.default(getitem_15, -1);  getitem_15 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:186 in _merge_one, code: out = out - F.sigmoid(block_lse - lse) * (out - block_out)
        sub_5: "f32[1, 2, 2, 1]" = torch.ops.aten.sub.Tensor(unsqueeze_2, sub_4)
        sigmoid_1: "f32[1, 2, 2, 1]" = torch.ops.aten.sigmoid.default(sub_5);  sub_5 = None
        sub_6: "f32[1, 2, 2, 4]" = torch.ops.aten.sub.Tensor(sub_2, getitem_14);  getitem_14 = None
        mul_1: "f32[1, 2, 2, 4]" = torch.ops.aten.mul.Tensor(sigmoid_1, sub_6);  sigmoid_1 = sub_6 = None
        sub_7: "f32[1, 2, 2, 4]" = torch.ops.aten.sub.Tensor(sub_2, mul_1);  sub_2 = mul_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:187 in _merge_one, code: lse = lse - F.logsigmoid(lse - block_lse)
        sub_8: "f32[1, 2, 2, 1]" = torch.ops.aten.sub.Tensor(sub_4, unsqueeze_2);  unsqueeze_2 = None
        log_sigmoid_forward_1 = torch.ops.aten.log_sigmoid_forward.default(sub_8);  sub_8 = None
        getitem_16: "f32[1, 2, 2, 1]" = log_sigmoid_forward_1[0];  log_sigmoid_forward_1 = None
        sub_9: "f32[1, 2, 2, 1]" = torch.ops.aten.sub.Tensor(sub_4, getitem_16);  sub_4 = getitem_16 = None

        # File: /models/ring_model.py:67 in next_buffer, code: return self._aggregated_buffer.chunk(size)[(dist.get_rank(self._pg) + self._idx) % size]
        split_2 = torch.ops.aten.split.Tensor(wait_tensor, 32);  wait_tensor = None
        getitem_20: "f32[32]" = split_2[2];  split_2 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:433 in _templated_ring_attention, code: key = next_kv[: key.numel()].reshape(key.shape)
        slice_5: "f32[16]" = torch.ops.aten.slice.Tensor(getitem_20, 0, 0, 16)
        view_10: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_5, [1, 2, 2, 4]);  slice_5 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:434 in _templated_ring_attention, code: value = next_kv[key.numel() :].reshape(value.shape)
        slice_6: "f32[16]" = torch.ops.aten.slice.Tensor(getitem_20, 0, 16, 9223372036854775807);  getitem_20 = None
        view_11: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_6, [1, 2, 2, 4]);  slice_6 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:475 in _templated_ring_attention, code: out, logsumexp, *rest = op(
        _scaled_dot_product_flash_attention_for_cpu_3 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, view_10, view_11);  arg0_1 = view_10 = view_11 = None
        getitem_22: "f32[1, 2, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu_3[0]
        getitem_23: "f32[1, 2, 2]" = _scaled_dot_product_flash_attention_for_cpu_3[1];  _scaled_dot_product_flash_attention_for_cpu_3 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:158 in _merge_one, code: block_lse = block_lse.unsqueeze(dim=-1)
        unsqueeze_3: "f32[1, 2, 2, 1]" = torch.ops.aten.unsqueeze.default(getitem_23, -1);  getitem_23 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:186 in _merge_one, code: out = out - F.sigmoid(block_lse - lse) * (out - block_out)
        sub_10: "f32[1, 2, 2, 1]" = torch.ops.aten.sub.Tensor(unsqueeze_3, sub_9)
        sigmoid_2: "f32[1, 2, 2, 1]" = torch.ops.aten.sigmoid.default(sub_10);  sub_10 = None
        sub_11: "f32[1, 2, 2, 4]" = torch.ops.aten.sub.Tensor(sub_7, getitem_22);  getitem_22 = None
        mul_2: "f32[1, 2, 2, 4]" = torch.ops.aten.mul.Tensor(sigmoid_2, sub_11);  sigmoid_2 = sub_11 = None
        sub_12: "f32[1, 2, 2, 4]" = torch.ops.aten.sub.Tensor(sub_7, mul_2);  sub_7 = mul_2 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:187 in _merge_one, code: lse = lse - F.logsigmoid(lse - block_lse)
        sub_13: "f32[1, 2, 2, 1]" = torch.ops.aten.sub.Tensor(sub_9, unsqueeze_3);  unsqueeze_3 = None
        log_sigmoid_forward_2 = torch.ops.aten.log_sigmoid_forward.default(sub_13);  sub_13 = None
        getitem_24: "f32[1, 2, 2, 1]" = log_sigmoid_forward_2[0];  log_sigmoid_forward_2 = None
        sub_14: "f32[1, 2, 2, 1]" = torch.ops.aten.sub.Tensor(sub_9, getitem_24);  sub_9 = getitem_24 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:226 in results, code: lse = self._lse.squeeze(-1).to(self._lse_dtype)
        squeeze: "f32[1, 2, 2]" = torch.ops.aten.squeeze.dim(sub_14, -1);  sub_14 = None
        return (sub_12, squeeze)
