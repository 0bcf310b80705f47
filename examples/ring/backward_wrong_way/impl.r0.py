class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[1, 2, 2, 4]", arg1_1: "f32[1, 2, 2, 4]", arg2_1: "f32[1, 2, 2, 4]", arg3_1: "f32[1, 2, 2, 4]"):
        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:438 in _templated_ring_attention, code: next_kv = torch.cat([key.flatten(), value.flatten()])
        view: "f32[16]" = torch.ops.aten.view.default(arg1_1, [16])
        view_1: "f32[16]" = torch.ops.aten.view.default(arg2_1, [16])
        cat: "f32[32]" = torch.ops.aten.cat.default([view, view_1]);  view = view_1 = None

        # File: torch/distributed/_functional_collectives.py:209 in all_gather_single, code: tensor = torch.ops._c10d_functional.all_gather_into_tensor(
        all_gather_into_tensor: "f32[128]" = torch.ops._c10d_functional.all_gather_into_tensor.default(cat, 4, '0');  cat = None

        # File: torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor: "f32[128]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor);  all_gather_into_tensor = wait_tensor = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:475 in _templated_ring_attention, code: out, logsumexp, *rest = op(
        _scaled_dot_product_flash_attention_for_cpu = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, arg1_1, arg2_1, 0.0, True)
        getitem: "f32[1, 2, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu[0]
        getitem_1: "f32[1, 2, 2]" = _scaled_dot_product_flash_attention_for_cpu[1];  _scaled_dot_product_flash_attention_for_cpu = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:158 in _merge_one, code: block_lse = block_lse.unsqueeze(dim=-1)
        unsqueeze: "f32[1, 2, 2, 1]" = torch.ops.aten.unsqueeze.default(getitem_1, -1);  getitem_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:226 in results, code: lse = self._lse.squeeze(-1).to(self._lse_dtype)
        squeeze: "f32[1, 2, 2]" = torch.ops.aten.squeeze.dim(unsqueeze, -1);  unsqueeze = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:513 in _templated_ring_attention_backward, code: grad_query = torch.zeros_like(query, dtype=accum_dtype)
        zeros_like: "f32[1, 2, 2, 4]" = torch.ops.aten.zeros_like.default(arg0_1, dtype = torch.float32, pin_memory = False)

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:514 in _templated_ring_attention_backward, code: grad_key = torch.zeros_like(key, dtype=accum_dtype)
        zeros_like_1: "f32[1, 2, 2, 4]" = torch.ops.aten.zeros_like.default(arg1_1, dtype = torch.float32, pin_memory = False)

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:515 in _templated_ring_attention_backward, code: grad_value = torch.zeros_like(value, dtype=accum_dtype)
        zeros_like_2: "f32[1, 2, 2, 4]" = torch.ops.aten.zeros_like.default(arg2_1, dtype = torch.float32, pin_memory = False)

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:533 in _templated_ring_attention_backward, code: next_kv = torch.cat([key.flatten(), value.flatten()])
        view_12: "f32[16]" = torch.ops.aten.view.default(arg1_1, [16])
        view_13: "f32[16]" = torch.ops.aten.view.default(arg2_1, [16])
        cat_3: "f32[32]" = torch.ops.aten.cat.default([view_12, view_13]);  view_12 = view_13 = None

        # File: torch/distributed/_functional_collectives.py:209 in all_gather_single, code: tensor = torch.ops._c10d_functional.all_gather_into_tensor(
        all_gather_into_tensor_1: "f32[128]" = torch.ops._c10d_functional.all_gather_into_tensor.default(cat_3, 4, '0');  cat_3 = None

        # File: torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor_1: "f32[128]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor_1);  all_gather_into_tensor_1 = None

        # File: /models/ring_backward_model.py:57 in _block_backward, code: return _sdpa_backward(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal)
        _scaled_dot_product_flash_attention_for_cpu_backward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default(arg3_1, arg0_1, arg1_1, arg2_1, getitem, squeeze, 0.0, True);  arg3_1 = arg1_1 = arg2_1 = None
        getitem_14: "f32[1, 2, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward[0]
        getitem_15: "f32[1, 2, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward[1]
        getitem_16: "f32[1, 2, 2, 4]" = _scaled_dot_product_flash_attention_for_cpu_backward[2];  _scaled_dot_product_flash_attention_for_cpu_backward = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:590 in _templated_ring_attention_backward, code: grad_key += grad_key_
        add: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(zeros_like_1, getitem_15);  zeros_like_1 = getitem_15 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:591 in _templated_ring_attention_backward, code: grad_value += grad_value_
        add_1: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(zeros_like_2, getitem_16);  zeros_like_2 = getitem_16 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:625 in _templated_ring_attention_backward, code: next_grad_kv = torch.cat([grad_key.flatten(), grad_value.flatten()])
        view_16: "f32[16]" = torch.ops.aten.view.default(add, [16]);  add = None
        view_17: "f32[16]" = torch.ops.aten.view.default(add_1, [16]);  add_1 = None
        cat_4: "f32[32]" = torch.ops.aten.cat.default([view_16, view_17]);  view_16 = view_17 = None

        # File: torch/distributed/_functional_collectives.py:583 in all_to_all_single, code: tensor = torch.ops._c10d_functional.all_to_all_single(  # type: ignore[attr-defined]
        all_to_all_single: "f32[32]" = torch.ops._c10d_functional.all_to_all_single.default(cat_4, [0, 32, 0, 0], [0, 0, 0, 32], '0');  cat_4 = None

        # File: torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor_2: "f32[32]" = torch.ops._c10d_functional.wait_tensor.default(all_to_all_single);  all_to_all_single = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:630 in _templated_ring_attention_backward, code: grad_query += grad_query_
        add_2: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(zeros_like, getitem_14);  zeros_like = getitem_14 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:300 in next_buffer, code: return self._aggregated_buffer.chunk(dist.get_world_size(self._pg))[idx]
        split_3 = torch.ops.aten.split.Tensor(wait_tensor_1, 32)
        getitem_20: "f32[32]" = split_3[3];  split_3 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:526 in _templated_ring_attention_backward, code: key = buffer[pointer : pointer + key.numel()].reshape(key.shape)
        slice_7: "f32[16]" = torch.ops.aten.slice.Tensor(getitem_20, 0, 0, 16)
        view_18: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_7, [1, 2, 2, 4]);  slice_7 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:528 in _templated_ring_attention_backward, code: value = buffer[pointer : pointer + value.numel()].reshape(value.shape)
        slice_8: "f32[16]" = torch.ops.aten.slice.Tensor(getitem_20, 0, 16, 32);  getitem_20 = None
        view_19: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_8, [1, 2, 2, 4]);  slice_8 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:584 in _templated_ring_attention_backward, code: grad_query_ = torch.zeros_like(query, dtype=accum_dtype)
        zeros_like_3: "f32[1, 2, 2, 4]" = torch.ops.aten.zeros_like.default(arg0_1, dtype = torch.float32, pin_memory = False)

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:585 in _templated_ring_attention_backward, code: grad_key_ = torch.zeros_like(key, dtype=accum_dtype)
        zeros_like_4: "f32[1, 2, 2, 4]" = torch.ops.aten.zeros_like.default(view_18, dtype = torch.float32, pin_memory = False);  view_18 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:586 in _templated_ring_attention_backward, code: grad_value_ = torch.zeros_like(value, dtype=accum_dtype)
        zeros_like_5: "f32[1, 2, 2, 4]" = torch.ops.aten.zeros_like.default(view_19, dtype = torch.float32, pin_memory = False);  view_19 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:596 in _templated_ring_attention_backward, code: grad_key = next_grad_kv[pointer : pointer + grad_key.numel()].reshape(
        slice_9: "f32[16]" = torch.ops.aten.slice.Tensor(wait_tensor_2, 0, 0, 16)
        view_22: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_9, [1, 2, 2, 4]);  slice_9 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:622 in _templated_ring_attention_backward, code: grad_key += grad_key_
        add_3: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(view_22, zeros_like_4);  view_22 = zeros_like_4 = None
        view_24: "f32[16]" = torch.ops.aten.view.default(add_3, [16]);  add_3 = None
        slice_scatter: "f32[32]" = torch.ops.aten.slice_scatter.default(wait_tensor_2, view_24, 0, 0, 16);  wait_tensor_2 = view_24 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:600 in _templated_ring_attention_backward, code: grad_value = next_grad_kv[pointer : pointer + grad_value.numel()].reshape(
        slice_13: "f32[16]" = torch.ops.aten.slice.Tensor(slice_scatter, 0, 16, 32)
        view_26: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_13, [1, 2, 2, 4]);  slice_13 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:623 in _templated_ring_attention_backward, code: grad_value += grad_value_
        add_4: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(view_26, zeros_like_5);  view_26 = zeros_like_5 = None
        view_27: "f32[16]" = torch.ops.aten.view.default(add_4, [16]);  add_4 = None
        slice_scatter_1: "f32[32]" = torch.ops.aten.slice_scatter.default(slice_scatter, view_27, 0, 16, 32);  slice_scatter = view_27 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:625 in _templated_ring_attention_backward, code: next_grad_kv = torch.cat([grad_key.flatten(), grad_value.flatten()])
        slice_17: "f32[16]" = torch.ops.aten.slice.Tensor(slice_scatter_1, 0, 0, 16)
        view_32: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_17, [1, 2, 2, 4]);  slice_17 = None
        view_33: "f32[16]" = torch.ops.aten.view.default(view_32, [16]);  view_32 = None
        slice_18: "f32[16]" = torch.ops.aten.slice.Tensor(slice_scatter_1, 0, 16, 32);  slice_scatter_1 = None
        view_34: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_18, [1, 2, 2, 4]);  slice_18 = None
        view_35: "f32[16]" = torch.ops.aten.view.default(view_34, [16]);  view_34 = None
        cat_6: "f32[32]" = torch.ops.aten.cat.default([view_33, view_35]);  view_33 = view_35 = None

        # File: torch/distributed/_functional_collectives.py:583 in all_to_all_single, code: tensor = torch.ops._c10d_functional.all_to_all_single(  # type: ignore[attr-defined]
        all_to_all_single_1: "f32[32]" = torch.ops._c10d_functional.all_to_all_single.default(cat_6, [0, 32, 0, 0], [0, 0, 0, 32], '0');  cat_6 = None

        # File: torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor_3: "f32[32]" = torch.ops._c10d_functional.wait_tensor.default(all_to_all_single_1);  all_to_all_single_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:630 in _templated_ring_attention_backward, code: grad_query += grad_query_
        add_5: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(add_2, zeros_like_3);  add_2 = zeros_like_3 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:300 in next_buffer, code: return self._aggregated_buffer.chunk(dist.get_world_size(self._pg))[idx]
        split_4 = torch.ops.aten.split.Tensor(wait_tensor_1, 32)
        getitem_23: "f32[32]" = split_4[2];  split_4 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:526 in _templated_ring_attention_backward, code: key = buffer[pointer : pointer + key.numel()].reshape(key.shape)
        slice_19: "f32[16]" = torch.ops.aten.slice.Tensor(getitem_23, 0, 0, 16)
        view_36: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_19, [1, 2, 2, 4]);  slice_19 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:528 in _templated_ring_attention_backward, code: value = buffer[pointer : pointer + value.numel()].reshape(value.shape)
        slice_20: "f32[16]" = torch.ops.aten.slice.Tensor(getitem_23, 0, 16, 32);  getitem_23 = None
        view_37: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_20, [1, 2, 2, 4]);  slice_20 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:584 in _templated_ring_attention_backward, code: grad_query_ = torch.zeros_like(query, dtype=accum_dtype)
        zeros_like_6: "f32[1, 2, 2, 4]" = torch.ops.aten.zeros_like.default(arg0_1, dtype = torch.float32, pin_memory = False)

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:585 in _templated_ring_attention_backward, code: grad_key_ = torch.zeros_like(key, dtype=accum_dtype)
        zeros_like_7: "f32[1, 2, 2, 4]" = torch.ops.aten.zeros_like.default(view_36, dtype = torch.float32, pin_memory = False);  view_36 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:586 in _templated_ring_attention_backward, code: grad_value_ = torch.zeros_like(value, dtype=accum_dtype)
        zeros_like_8: "f32[1, 2, 2, 4]" = torch.ops.aten.zeros_like.default(view_37, dtype = torch.float32, pin_memory = False);  view_37 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:596 in _templated_ring_attention_backward, code: grad_key = next_grad_kv[pointer : pointer + grad_key.numel()].reshape(
        slice_21: "f32[16]" = torch.ops.aten.slice.Tensor(wait_tensor_3, 0, 0, 16)
        view_40: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_21, [1, 2, 2, 4]);  slice_21 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:622 in _templated_ring_attention_backward, code: grad_key += grad_key_
        add_6: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(view_40, zeros_like_7);  view_40 = zeros_like_7 = None
        view_42: "f32[16]" = torch.ops.aten.view.default(add_6, [16]);  add_6 = None
        slice_scatter_2: "f32[32]" = torch.ops.aten.slice_scatter.default(wait_tensor_3, view_42, 0, 0, 16);  wait_tensor_3 = view_42 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:600 in _templated_ring_attention_backward, code: grad_value = next_grad_kv[pointer : pointer + grad_value.numel()].reshape(
        slice_25: "f32[16]" = torch.ops.aten.slice.Tensor(slice_scatter_2, 0, 16, 32)
        view_44: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_25, [1, 2, 2, 4]);  slice_25 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:623 in _templated_ring_attention_backward, code: grad_value += grad_value_
        add_7: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(view_44, zeros_like_8);  view_44 = zeros_like_8 = None
        view_45: "f32[16]" = torch.ops.aten.view.default(add_7, [16]);  add_7 = None
        slice_scatter_3: "f32[32]" = torch.ops.aten.slice_scatter.default(slice_scatter_2, view_45, 0, 16, 32);  slice_scatter_2 = view_45 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:625 in _templated_ring_attention_backward, code: next_grad_kv = torch.cat([grad_key.flatten(), grad_value.flatten()])
        slice_29: "f32[16]" = torch.ops.aten.slice.Tensor(slice_scatter_3, 0, 0, 16)
        view_50: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_29, [1, 2, 2, 4]);  slice_29 = None
        view_51: "f32[16]" = torch.ops.aten.view.default(view_50, [16]);  view_50 = None
        slice_30: "f32[16]" = torch.ops.aten.slice.Tensor(slice_scatter_3, 0, 16, 32);  slice_scatter_3 = None
        view_52: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_30, [1, 2, 2, 4]);  slice_30 = None
        view_53: "f32[16]" = torch.ops.aten.view.default(view_52, [16]);  view_52 = None
        cat_8: "f32[32]" = torch.ops.aten.cat.default([view_51, view_53]);  view_51 = view_53 = None

        # File: torch/distributed/_functional_collectives.py:583 in all_to_all_single, code: tensor = torch.ops._c10d_functional.all_to_all_single(  # type: ignore[attr-defined]
        all_to_all_single_2: "f32[32]" = torch.ops._c10d_functional.all_to_all_single.default(cat_8, [0, 32, 0, 0], [0, 0, 0, 32], '0');  cat_8 = None

        # File: torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor_4: "f32[32]" = torch.ops._c10d_functional.wait_tensor.default(all_to_all_single_2);  all_to_all_single_2 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:630 in _templated_ring_attention_backward, code: grad_query += grad_query_
        add_8: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(add_5, zeros_like_6);  add_5 = zeros_like_6 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:300 in next_buffer, code: return self._aggregated_buffer.chunk(dist.get_world_size(self._pg))[idx]
        split_5 = torch.ops.aten.split.Tensor(wait_tensor_1, 32);  wait_tensor_1 = None
        getitem_26: "f32[32]" = split_5[1];  split_5 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:526 in _templated_ring_attention_backward, code: key = buffer[pointer : pointer + key.numel()].reshape(key.shape)
        slice_31: "f32[16]" = torch.ops.aten.slice.Tensor(getitem_26, 0, 0, 16)
        view_54: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_31, [1, 2, 2, 4]);  slice_31 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:528 in _templated_ring_attention_backward, code: value = buffer[pointer : pointer + value.numel()].reshape(value.shape)
        slice_32: "f32[16]" = torch.ops.aten.slice.Tensor(getitem_26, 0, 16, 32);  getitem_26 = None
        view_55: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_32, [1, 2, 2, 4]);  slice_32 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:584 in _templated_ring_attention_backward, code: grad_query_ = torch.zeros_like(query, dtype=accum_dtype)
        zeros_like_9: "f32[1, 2, 2, 4]" = torch.ops.aten.zeros_like.default(arg0_1, dtype = torch.float32, pin_memory = False);  arg0_1 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:585 in _templated_ring_attention_backward, code: grad_key_ = torch.zeros_like(key, dtype=accum_dtype)
        zeros_like_10: "f32[1, 2, 2, 4]" = torch.ops.aten.zeros_like.default(view_54, dtype = torch.float32, pin_memory = False);  view_54 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:586 in _templated_ring_attention_backward, code: grad_value_ = torch.zeros_like(value, dtype=accum_dtype)
        zeros_like_11: "f32[1, 2, 2, 4]" = torch.ops.aten.zeros_like.default(view_55, dtype = torch.float32, pin_memory = False);  view_55 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:596 in _templated_ring_attention_backward, code: grad_key = next_grad_kv[pointer : pointer + grad_key.numel()].reshape(
        slice_33: "f32[16]" = torch.ops.aten.slice.Tensor(wait_tensor_4, 0, 0, 16)
        view_56: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_33, [1, 2, 2, 4]);  slice_33 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:622 in _templated_ring_attention_backward, code: grad_key += grad_key_
        add_9: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(view_56, zeros_like_10);  view_56 = zeros_like_10 = None
        view_58: "f32[16]" = torch.ops.aten.view.default(add_9, [16]);  add_9 = None
        slice_scatter_4: "f32[32]" = torch.ops.aten.slice_scatter.default(wait_tensor_4, view_58, 0, 0, 16);  wait_tensor_4 = view_58 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:600 in _templated_ring_attention_backward, code: grad_value = next_grad_kv[pointer : pointer + grad_value.numel()].reshape(
        slice_37: "f32[16]" = torch.ops.aten.slice.Tensor(slice_scatter_4, 0, 16, 32)
        view_60: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_37, [1, 2, 2, 4]);  slice_37 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:623 in _templated_ring_attention_backward, code: grad_value += grad_value_
        add_10: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(view_60, zeros_like_11);  view_60 = zeros_like_11 = None
        view_61: "f32[16]" = torch.ops.aten.view.default(add_10, [16]);  add_10 = None
        slice_scatter_5: "f32[32]" = torch.ops.aten.slice_scatter.default(slice_scatter_4, view_61, 0, 16, 32);  slice_scatter_4 = view_61 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:625 in _templated_ring_attention_backward, code: next_grad_kv = torch.cat([grad_key.flatten(), grad_value.flatten()])
        slice_41: "f32[16]" = torch.ops.aten.slice.Tensor(slice_scatter_5, 0, 0, 16)
        view_66: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_41, [1, 2, 2, 4]);  slice_41 = None
        view_67: "f32[16]" = torch.ops.aten.view.default(view_66, [16]);  view_66 = None
        slice_42: "f32[16]" = torch.ops.aten.slice.Tensor(slice_scatter_5, 0, 16, 32);  slice_scatter_5 = None
        view_68: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_42, [1, 2, 2, 4]);  slice_42 = None
        view_69: "f32[16]" = torch.ops.aten.view.default(view_68, [16]);  view_68 = None
        cat_9: "f32[32]" = torch.ops.aten.cat.default([view_67, view_69]);  view_67 = view_69 = None

        # File: torch/distributed/_functional_collectives.py:583 in all_to_all_single, code: tensor = torch.ops._c10d_functional.all_to_all_single(  # type: ignore[attr-defined]
        all_to_all_single_3: "f32[32]" = torch.ops._c10d_functional.all_to_all_single.default(cat_9, [0, 32, 0, 0], [0, 0, 0, 32], '0');  cat_9 = None

        # File: torch/distributed/_functional_collectives.py:142 in wait_tensor, code: return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]
        wait_tensor_5: "f32[32]" = torch.ops._c10d_functional.wait_tensor.default(all_to_all_single_3);  all_to_all_single_3 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:630 in _templated_ring_attention_backward, code: grad_query += grad_query_
        add_11: "f32[1, 2, 2, 4]" = torch.ops.aten.add.Tensor(add_8, zeros_like_9);  add_8 = zeros_like_9 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:647 in _templated_ring_attention_backward, code: grad_key = next_grad_kv[: grad_key.numel()].reshape(grad_key.shape)
        slice_43: "f32[16]" = torch.ops.aten.slice.Tensor(wait_tensor_5, 0, 0, 16)
        view_70: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_43, [1, 2, 2, 4]);  slice_43 = None

        # File: torch/distributed/tensor/experimental/_context_parallel/_attention.py:648 in _templated_ring_attention_backward, code: grad_value = next_grad_kv[grad_key.numel() :].reshape(grad_value.shape)
        slice_44: "f32[16]" = torch.ops.aten.slice.Tensor(wait_tensor_5, 0, 16, 9223372036854775807);  wait_tensor_5 = None
        view_71: "f32[1, 2, 2, 4]" = torch.ops.aten.view.default(slice_44, [1, 2, 2, 4]);  slice_44 = None
        return (getitem, squeeze, add_11, view_70, view_71)
