class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[1, 2, 4, 4]", arg1_1: "f32[1, 2, 4, 4]", arg2_1: "f32[1, 2, 4, 4]", arg3_1: "f32[1, 2, 4, 4]"):
        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:438 in _templated_ring_attention, code: next_kv = torch.cat([key.flatten(), value.flatten()])
        view: "f32[32]" = torch.ops.aten.view.default(arg1_1, [32])
        view_1: "f32[32]" = torch.ops.aten.view.default(arg2_1, [32])
        cat: "f32[64]" = torch.ops.aten.cat.default([view, view_1]);  view = view_1 = None

        # File: torch/distributed/_functional_collectives.py:209 in all_gather_single, code: tensor = torch.ops._c10d_functional.all_gather_into_tensor(
        all_gather_into_tensor: "f32[128]" = torch.ops._c10d_functional.all_gather_into_tensor.default(cat, 2, '0');  cat = None

        # File: torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor: "f32[128]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor);  all_gather_into_tensor = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:475 in _templated_ring_attention, code: out, logsumexp, *rest = op(
        _scaled_dot_product_flash_attention_for_cpu = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, arg1_1, arg2_1, 0.0, True)
        getitem: "f32[1, 2, 4, 4]" = _scaled_dot_product_flash_attention_for_cpu[0]
        getitem_1: "f32[1, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu[1];  _scaled_dot_product_flash_attention_for_cpu = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:158 in _merge_one, code: block_lse = block_lse.unsqueeze(dim=-1)
        unsqueeze: "f32[1, 2, 4, 1]" = torch.ops.aten.unsqueeze.default(getitem_1, -1);  getitem_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:300 in next_buffer, code: return self._aggregated_buffer.chunk(dist.get_world_size(self._pg))[idx]
        split = torch.ops.aten.split.Tensor(wait_tensor, 64);  wait_tensor = None
        getitem_2: "f32[64]" = split[0];  split = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:433 in _templated_ring_attention, code: key = next_kv[: key.numel()].reshape(key.shape)
        slice_1: "f32[32]" = torch.ops.aten.slice.Tensor(getitem_2, 0, 0, 32)
        view_2: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_1, [1, 2, 4, 4]);  slice_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:434 in _templated_ring_attention, code: value = next_kv[key.numel() :].reshape(value.shape)
        slice_2: "f32[32]" = torch.ops.aten.slice.Tensor(getitem_2, 0, 32, 9223372036854775807);  getitem_2 = None
        view_3: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_2, [1, 2, 4, 4]);  slice_2 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:462 in _templated_ring_attention, code: key.chunk(ROUND_ROBIN_CYCLE, dim=2)[0],
        split_1 = torch.ops.aten.split.Tensor(view_2, 2, 2);  view_2 = None
        getitem_4: "f32[1, 2, 2, 4]" = split_1[0];  split_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:463 in _templated_ring_attention, code: value.chunk(ROUND_ROBIN_CYCLE, dim=2)[0],
        split_2 = torch.ops.aten.split.Tensor(view_3, 2, 2);  view_3 = None
        getitem_6: "f32[1, 2, 2, 4]" = split_2[0];  split_2 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:475 in _templated_ring_attention, code: out, logsumexp, *rest = op(
        _scaled_dot_product_flash_attention_for_cpu_1 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, getitem_4, getitem_6);  getitem_4 = getitem_6 = None
        getitem_8: "f32[1, 2, 4, 4]" = _scaled_dot_product_flash_attention_for_cpu_1[0]
        getitem_9: "f32[1, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu_1[1];  _scaled_dot_product_flash_attention_for_cpu_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:158 in _merge_one, code: block_lse = block_lse.unsqueeze(dim=-1)
        unsqueeze_1: "f32[1, 2, 4, 1]" = torch.ops.aten.unsqueeze.default(getitem_9, -1);  getitem_9 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:186 in _merge_one, code: out = out - F.sigmoid(block_lse - lse) * (out - block_out)
        sub: "f32[1, 2, 4, 1]" = torch.ops.aten.sub.Tensor(unsqueeze_1, unsqueeze)
        sigmoid: "f32[1, 2, 4, 1]" = torch.ops.aten.sigmoid.default(sub);  sub = None
        sub_1: "f32[1, 2, 4, 4]" = torch.ops.aten.sub.Tensor(getitem, getitem_8);  getitem_8 = None
        mul: "f32[1, 2, 4, 4]" = torch.ops.aten.mul.Tensor(sigmoid, sub_1);  sigmoid = sub_1 = None
        sub_2: "f32[1, 2, 4, 4]" = torch.ops.aten.sub.Tensor(getitem, mul);  getitem = mul = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:187 in _merge_one, code: lse = lse - F.logsigmoid(lse - block_lse)
        sub_3: "f32[1, 2, 4, 1]" = torch.ops.aten.sub.Tensor(unsqueeze, unsqueeze_1);  unsqueeze_1 = None
        log_sigmoid_forward = torch.ops.aten.log_sigmoid_forward.default(sub_3);  sub_3 = None
        getitem_10: "f32[1, 2, 4, 1]" = log_sigmoid_forward[0];  log_sigmoid_forward = None
        sub_4: "f32[1, 2, 4, 1]" = torch.ops.aten.sub.Tensor(unsqueeze, getitem_10);  unsqueeze = getitem_10 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:226 in results, code: lse = self._lse.squeeze(-1).to(self._lse_dtype)
        squeeze: "f32[1, 2, 4]" = torch.ops.aten.squeeze.dim(sub_4, -1);  sub_4 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:513 in _templated_ring_attention_backward, code: grad_query = torch.zeros_like(query, dtype=accum_dtype)
        zeros_like: "f32[1, 2, 4, 4]" = torch.ops.aten.zeros_like.default(arg0_1, dtype = torch.float32, pin_memory = False)

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:514 in _templated_ring_attention_backward, code: grad_key = torch.zeros_like(key, dtype=accum_dtype)
        zeros_like_1: "f32[1, 2, 4, 4]" = torch.ops.aten.zeros_like.default(arg1_1, dtype = torch.float32, pin_memory = False)

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:515 in _templated_ring_attention_backward, code: grad_value = torch.zeros_like(value, dtype=accum_dtype)
        zeros_like_2: "f32[1, 2, 4, 4]" = torch.ops.aten.zeros_like.default(arg2_1, dtype = torch.float32, pin_memory = False)

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:533 in _templated_ring_attention_backward, code: next_kv = torch.cat([key.flatten(), value.flatten()])
        view_4: "f32[32]" = torch.ops.aten.view.default(arg1_1, [32])
        view_5: "f32[32]" = torch.ops.aten.view.default(arg2_1, [32])
        cat_1: "f32[64]" = torch.ops.aten.cat.default([view_4, view_5]);  view_4 = view_5 = None

        # File: torch/distributed/_functional_collectives.py:209 in all_gather_single, code: tensor = torch.ops._c10d_functional.all_gather_into_tensor(
        all_gather_into_tensor_1: "f32[128]" = torch.ops._c10d_functional.all_gather_into_tensor.default(cat_1, 2, '0');  cat_1 = None

        # File: torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor_1: "f32[128]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor_1);  all_gather_into_tensor_1 = None

        # File: /models/ring_backward_model.py:57 in _block_backward, code: return _sdpa_backward(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal)
        _scaled_dot_product_flash_attention_for_cpu_backward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default(arg3_1, arg0_1, arg1_1, arg2_1, sub_2, squeeze, 0.0, True);  arg1_1 = arg2_1 = None
        getitem_12: "f32[1, 2, 4, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward[0]
        getitem_13: "f32[1, 2, 4, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward[1]
        getitem_14: "f32[1, 2, 4, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward[2];  _scaled_dot_product_flash_attention_for_cpu_backward = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:590 in _templated_ring_attention_backward, code: grad_key += grad_key_
        add: "f32[1, 2, 4, 4]" = torch.ops.aten.add.Tensor(zeros_like_1, getitem_13);  zeros_like_1 = getitem_13 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:591 in _templated_ring_attention_backward, code: grad_value += grad_value_
        add_1: "f32[1, 2, 4, 4]" = torch.ops.aten.add.Tensor(zeros_like_2, getitem_14);  zeros_like_2 = getitem_14 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:625 in _templated_ring_attention_backward, code: next_grad_kv = torch.cat([grad_key.flatten(), grad_value.flatten()])
        view_8: "f32[32]" = torch.ops.aten.view.default(add, [32]);  add = None
        view_9: "f32[32]" = torch.ops.aten.view.default(add_1, [32]);  add_1 = None
        cat_2: "f32[64]" = torch.ops.aten.cat.default([view_8, view_9]);  view_8 = view_9 = None

        # File: torch/distributed/_functional_collectives.py:583 in all_to_all_single, code: tensor = torch.ops._c10d_functional.all_to_all_single(  # type: ignore[attr-defined]
        all_to_all_single: "f32[64]" = torch.ops._c10d_functional.all_to_all_single.default(cat_2, [64, 0], [64, 0], '0');  cat_2 = None

        # File: torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor_2: "f32[64]" = torch.ops._c10d_functional.wait_tensor.default(all_to_all_single);  all_to_all_single = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:630 in _templated_ring_attention_backward, code: grad_query += grad_query_
        add_2: "f32[1, 2, 4, 4]" = torch.ops.aten.add.Tensor(zeros_like, getitem_12);  zeros_like = getitem_12 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:300 in next_buffer, code: return self._aggregated_buffer.chunk(dist.get_world_size(self._pg))[idx]
        split_3 = torch.ops.aten.split.Tensor(wait_tensor_1, 64);  wait_tensor_1 = None
        getitem_15: "f32[64]" = split_3[0];  split_3 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:526 in _templated_ring_attention_backward, code: key = buffer[pointer : pointer + key.numel()].reshape(key.shape)
        slice_3: "f32[32]" = torch.ops.aten.slice.Tensor(getitem_15, 0, 0, 32)
        view_10: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_3, [1, 2, 4, 4]);  slice_3 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:528 in _templated_ring_attention_backward, code: value = buffer[pointer : pointer + value.numel()].reshape(value.shape)
        slice_4: "f32[32]" = torch.ops.aten.slice.Tensor(getitem_15, 0, 32, 64);  getitem_15 = None
        view_11: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_4, [1, 2, 4, 4]);  slice_4 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:550 in _templated_ring_attention_backward, code: key.chunk(2, dim=seq_dim)[0],
        split_4 = torch.ops.aten.split.Tensor(view_10, 2, 2);  view_10 = None
        getitem_17: "f32[1, 2, 2, 4]" = split_4[0];  split_4 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:551 in _templated_ring_attention_backward, code: value.chunk(2, dim=seq_dim)[0],
        split_5 = torch.ops.aten.split.Tensor(view_11, 2, 2);  view_11 = None
        getitem_19: "f32[1, 2, 2, 4]" = split_5[0];  split_5 = None

        # File: /models/ring_backward_model.py:57 in _block_backward, code: return _sdpa_backward(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal)
        _scaled_dot_product_flash_attention_for_cpu_backward_1 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default(arg3_1, arg0_1, getitem_17, getitem_19, sub_2, squeeze, 0.0, False);  arg3_1 = arg0_1 = getitem_17 = getitem_19 = None
        getitem_21: "f32[1, 2, 4, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward_1[0]
        getitem_22: "f32[1, 2, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward_1[1]
        getitem_23: "f32[1, 2, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward_1[2];  _scaled_dot_product_flash_attention_for_cpu_backward_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:596 in _templated_ring_attention_backward, code: grad_key = next_grad_kv[pointer : pointer + grad_key.numel()].reshape(
        slice_5: "f32[32]" = torch.ops.aten.slice.Tensor(wait_tensor_2, 0, 0, 32)
        view_12: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_5, [1, 2, 4, 4]);  slice_5 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:129 in _partial_update, code: chunks = list(original.chunk(n_chunks, dim=dim))
        split_6 = torch.ops.aten.split.Tensor(view_12, 2, 2);  view_12 = None
        getitem_24: "f32[1, 2, 2, 4]" = split_6[0];  split_6 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:133 in _partial_update, code: chunks[idx] += new
        add_3: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(getitem_24, getitem_22);  getitem_24 = getitem_22 = None
        slice_7: "f32[32]" = torch.ops.aten.slice.Tensor(wait_tensor_2, 0, 0, 32)
        view_14: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_7, [1, 2, 4, 4]);  slice_7 = None
        slice_scatter: "f32[1, 2, 4, 4]" = torch.ops.aten.slice_scatter.default(view_14, add_3, 2, 0, 2);  view_14 = add_3 = None
        view_15: "f32[32]" = torch.ops.aten.view.default(slice_scatter, [32]);  slice_scatter = None
        slice_scatter_1: "f32[64]" = torch.ops.aten.slice_scatter.default(wait_tensor_2, view_15, 0, 0, 32);  wait_tensor_2 = view_15 = None
        slice_8: "f32[32]" = torch.ops.aten.slice.Tensor(slice_scatter_1, 0, 0, 32)
        view_16: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_8, [1, 2, 4, 4]);  slice_8 = None
        split_7 = torch.ops.aten.split.Tensor(view_16, 2, 2);  view_16 = None
        getitem_26: "f32[1, 2, 2, 4]" = split_7[0];  split_7 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:129 in _partial_update, code: chunks = list(original.chunk(n_chunks, dim=dim))
        slice_9: "f32[32]" = torch.ops.aten.slice.Tensor(slice_scatter_1, 0, 0, 32)
        view_17: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_9, [1, 2, 4, 4]);  slice_9 = None
        split_8 = torch.ops.aten.split.Tensor(view_17, 2, 2);  view_17 = None
        getitem_29: "f32[1, 2, 2, 4]" = split_8[1];  split_8 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:136 in _partial_update, code: return torch.cat(chunks, dim=dim)
        cat_3: "f32[1, 2, 4, 4]" = torch.ops.aten.cat.default([getitem_26, getitem_29], 2);  getitem_26 = getitem_29 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:129 in _partial_update, code: chunks = list(original.chunk(n_chunks, dim=dim))
        slice_11: "f32[32]" = torch.ops.aten.slice.Tensor(slice_scatter_1, 0, 32, 64)
        view_19: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_11, [1, 2, 4, 4]);  slice_11 = None
        split_10 = torch.ops.aten.split.Tensor(view_19, 2, 2);  view_19 = None
        getitem_32: "f32[1, 2, 2, 4]" = split_10[0];  split_10 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:133 in _partial_update, code: chunks[idx] += new
        add_4: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(getitem_32, getitem_23);  getitem_32 = getitem_23 = None
        slice_12: "f32[32]" = torch.ops.aten.slice.Tensor(slice_scatter_1, 0, 32, 64)
        view_20: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_12, [1, 2, 4, 4]);  slice_12 = None
        slice_scatter_2: "f32[1, 2, 4, 4]" = torch.ops.aten.slice_scatter.default(view_20, add_4, 2, 0, 2);  view_20 = add_4 = None
        view_21: "f32[32]" = torch.ops.aten.view.default(slice_scatter_2, [32]);  slice_scatter_2 = None
        slice_scatter_3: "f32[64]" = torch.ops.aten.slice_scatter.default(slice_scatter_1, view_21, 0, 32, 64);  slice_scatter_1 = view_21 = None
        slice_13: "f32[32]" = torch.ops.aten.slice.Tensor(slice_scatter_3, 0, 32, 64)
        view_22: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_13, [1, 2, 4, 4]);  slice_13 = None
        split_11 = torch.ops.aten.split.Tensor(view_22, 2, 2);  view_22 = None
        getitem_34: "f32[1, 2, 2, 4]" = split_11[0];  split_11 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:129 in _partial_update, code: chunks = list(original.chunk(n_chunks, dim=dim))
        slice_14: "f32[32]" = torch.ops.aten.slice.Tensor(slice_scatter_3, 0, 32, 64);  slice_scatter_3 = None
        view_23: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_14, [1, 2, 4, 4]);  slice_14 = None
        split_12 = torch.ops.aten.split.Tensor(view_23, 2, 2);  view_23 = None
        getitem_37: "f32[1, 2, 2, 4]" = split_12[1];  split_12 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:136 in _partial_update, code: return torch.cat(chunks, dim=dim)
        cat_4: "f32[1, 2, 4, 4]" = torch.ops.aten.cat.default([getitem_34, getitem_37], 2);  getitem_34 = getitem_37 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:625 in _templated_ring_attention_backward, code: next_grad_kv = torch.cat([grad_key.flatten(), grad_value.flatten()])
        view_24: "f32[32]" = torch.ops.aten.view.default(cat_3, [32]);  cat_3 = None
        view_25: "f32[32]" = torch.ops.aten.view.default(cat_4, [32]);  cat_4 = None
        cat_5: "f32[64]" = torch.ops.aten.cat.default([view_24, view_25]);  view_24 = view_25 = None

        # File: torch/distributed/_functional_collectives.py:583 in all_to_all_single, code: tensor = torch.ops._c10d_functional.all_to_all_single(  # type: ignore[attr-defined]
        all_to_all_single_1: "f32[64]" = torch.ops._c10d_functional.all_to_all_single.default(cat_5, [64, 0], [64, 0], '0');  cat_5 = None

        # File: torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor_3: "f32[64]" = torch.ops._c10d_functional.wait_tensor.default(all_to_all_single_1);  all_to_all_single_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:630 in _templated_ring_attention_backward, code: grad_query += grad_query_
        add_5: "f32[1, 2, 4, 4]" = torch.ops.aten.add.Tensor(add_2, getitem_21);  add_2 = getitem_21 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:647 in _templated_ring_attention_backward, code: grad_key = next_grad_kv[: grad_key.numel()].reshape(grad_key.shape)
        slice_15: "f32[32]" = torch.ops.aten.slice.Tensor(wait_tensor_3, 0, 0, 32)
        view_26: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_15, [1, 2, 4, 4]);  slice_15 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:648 in _templated_ring_attention_backward, code: grad_value = next_grad_kv[grad_key.numel() :].reshape(grad_value.shape)
        slice_16: "f32[32]" = torch.ops.aten.slice.Tensor(wait_tensor_3, 0, 32, 9223372036854775807);  wait_tensor_3 = None
        view_27: "f32[1, 2, 4, 4]" = torch.ops.aten.view.default(slice_16, [1, 2, 4, 4]);  slice_16 = None
        return (sub_2, squeeze, add_5, view_26, view_27)
