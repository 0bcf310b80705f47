"""Data parallelism, FSDP-style sharding, gradient accumulation and the AdamW step, from real torch code.

Every graph is captured once, in ONE process (tests/python/dp_capture.py: a process per graph would
import torch a dozen times), by a session fixture; each test then runs the checker on one case.
The models are in dp_model.py (DDP, accumulation), fsdp_model.py and adamw_model.py; their
docstrings say exactly what is traced.
"""
import json
import os
import pathlib
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path[:0] = [os.path.join(ROOT, "python"), HERE]

import tangle  # noqa: E402
import tangle.capture  # noqa: E402
from tangle.binary import find_binary, locate_binary  # noqa: E402
from dp_capture import capture_in_child  # noqa: E402

TANGLE = find_binary()

CASES = {
    "ddp": "dp_model:spec:build:2",
    "ddp_no_reduce": "dp_model:spec:build_no_reduce:2",
    "ddp_no_div": "dp_model:spec:build_no_div:2",
    "accum": "dp_model:spec:build_accum:2:relation_accum",
    "accum_unscaled": "dp_model:spec:build_accum_unscaled:2:relation_accum",
    "fsdp_even": "fsdp_model:spec_even:build_even:2",
    "fsdp_even_no_rs": "fsdp_model:spec_even:build_even_no_rs:2",
    "fsdp_even_swapped": "fsdp_model:spec_even:build_even_swapped:2",
    "fsdp_uneven": "fsdp_model:spec:build:2",
    "adamw": "adamw_model:spec:build:2",
    "adamw_lr_scaled": "adamw_model:spec:build_lr_scaled:2",
}


@pytest.fixture(scope="session")
def captured(tmp_path_factory):
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    return capture_in_child(tmp_path_factory.mktemp("dp"), CASES)


def check(captured, name):
    return tangle.check(str(captured / name / "check.rel"), tangle=str(TANGLE))


def test_ddp_gradients_refine(captured):
    r = check(captured, "ddp")
    assert r.verdict == "refines", r.report
    assert len(r.expectations) == 8 and all(e["holds"] for e in r.expectations)  # 4 gradients x 2 ranks


@pytest.mark.parametrize("case", ["ddp_no_reduce", "ddp_no_div"])
def test_ddp_wrong_reduction_is_a_violation(captured, case):
    r = check(captured, case)
    assert r.verdict == "violation", r.report
    # the backward's seed (1/global count here, 1/local count on a rank) is never made whole again:
    # the first gradient output (b2's) is where the search stops
    assert r.failure is not None and "S.view (aten.view.default)" in r.checker_report, r.report


# The spec's gradient is a 4-term sum over (rank, micro-batch) while each rank returns its two
# micro-batch gradients added: `sum-pairs-into-adds` regroups the spec's terms into the adds the
# ranks computed (never the other way: an add is not flattened into a clean sum).
def test_accumulation_refines(captured):
    r = check(captured, "accum")
    assert r.verdict == "refines", r.report
    assert len(r.expectations) == 8 and all(e["holds"] for e in r.expectations)  # 4 gradients x 2 ranks


def test_accumulation_without_loss_scaling_is_a_violation_at_the_seed(captured):
    r = check(captured, "accum_unscaled")
    assert r.verdict == "violation", r.report
    # without the 1/2 each rank's backward seed is twice the spec's share, never made whole again: the
    # seed's ones expand to the same values on both sides, the mean's 1/numel division is where they part
    assert r.failure is not None and r.failure.op == "aten.div.Scalar", r.report


def test_fsdp_flat_buffers_refine(captured):
    r = check(captured, "fsdp_even")
    assert r.verdict == "refines", r.report
    assert len(r.expectations) == 4 and all(e["holds"] for e in r.expectations)  # one per gradient (shard over ranks)


@pytest.mark.parametrize("case", ["fsdp_even_no_rs", "fsdp_even_swapped"])
def test_fsdp_wrong_reduce_scatter_is_a_violation(captured, case):
    r = check(captured, case)
    assert r.verdict == "violation", r.report


# A dim 0 that does not divide by the ranks (3 rows padded to 4): the padded gradient's rows straddle
# the reshape into [ranks, -1] chunks; the Z3-proved `reshape-slice` relates that reshape.
def test_fsdp_padded_shards_refine(captured):
    r = check(captured, "fsdp_uneven")
    assert r.verdict == "refines", r.report


def test_adamw_on_shards_refines(captured):
    r = check(captured, "adamw")
    assert r.verdict == "refines", r.report
    assert len(r.expectations) == 3 and all(e["holds"] for e in r.expectations)  # param, exp_avg, exp_avg_sq


def test_adamw_with_scaled_lr_is_a_violation_at_the_decay(captured):
    r = check(captured, "adamw_lr_scaled")
    assert r.verdict == "violation", r.report
    # the first use of lr: p * (1 - lr * weight_decay)
    assert r.failure.op == "aten.mul.Tensor", r.report


# ---------------------------------------------------------------- real DistributedDataParallel
# tangle.ddp traces DDP itself (python reducer: divide, all-reduce, wait, copy_ into .grad) with
# make_fx; tests/python/ddp_real_model.py has the model and the planted bugs.
_REAL = {}


def _real_ddp(tmp_path_factory, build, spec):
    if build not in _REAL:
        pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
        if TANGLE is None:
            pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
        from tangle import pp
        out = tmp_path_factory.mktemp(f"ddp_{build}")
        pp.capture_pipeline_fake(("ddp_real_model", build), ("ddp_real_model", spec), 2, str(out))
        _REAL[build] = (out, tangle.check(pp.write_relation(str(out), 2), tangle=str(TANGLE)))
    return _REAL[build]


def test_real_ddp_step_refines(tmp_path_factory):
    out, r = _real_ddp(tmp_path_factory, "build", "spec")
    assert r.verdict == "refines", r.report
    impl = (out / "impl.r0.py").read_text()
    # DDP's own reducer is in the graph: one all-reduce and one copy_ into .grad per parameter
    assert impl.count("_c10d_functional.all_reduce.default(") == 4 and impl.count("aten.copy_.default(") == 4
    # each of the 4 spec gradients IS every rank's .grad after DDP's copy_ (DDP keeps replicas equal)
    assert len(json.loads((out / "spec.pp.json").read_text())["outputs"]) == 4
    plain = {}
    for lhs, rhs in r.output_relation:
        if re.fullmatch(r"D[01]\.copy_\w*", rhs):
            plain.setdefault(lhs, set()).add(rhs[:2])
    assert len(plain) == 4 and all(ranks == {"D0", "D1"} for ranks in plain.values()), r.report


def test_real_ddp_under_no_sync_is_a_violation(tmp_path_factory):
    out, r = _real_ddp(tmp_path_factory, "build_no_sync", "spec")
    assert r.verdict == "violation", r.report
    assert "all_reduce" not in (out / "impl.r0.py").read_text()
    # nothing makes a rank's 1/(local rows) seed the spec's 1/(global rows) again
    assert r.failure is not None and r.failure.op == "aten.div.Tensor", r.report


def test_real_ddp_with_a_summed_loss_is_a_violation(tmp_path_factory):
    _, r = _real_ddp(tmp_path_factory, "build_sum_loss", "spec_sum")
    assert r.verdict == "violation", r.report
    # the ranks' sum exists, but DDP returns half of it: the first gradient output fails
    assert r.failure is not None and r.failure.op == "aten.view.default", r.report
    assert "do not return" in r.failure.reason, r.report


# ---- real FSDP2 (fully_shard): FSDP's own all-gather and reduce-scatter, under the fake process group
_FSDP = {}


def _fsdp_capture(tmp_path_factory, build, spec):
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    from tangle import pp
    out = tmp_path_factory.mktemp(f"fsdp_{build}")
    pp.capture_pipeline_fake(("fsdp_real_model", build), ("fsdp_real_model", spec), 2, str(out))
    # with each rank's expectations: its returned gradients (views of the reduce-scatter output, which the
    # buffer pass rewrites keeping their names) must be its shard of the spec's gradients
    return out, pp.write_relation(str(out), 2)


def _real_fsdp(tmp_path_factory, build, spec="spec"):
    if build not in _FSDP:
        out, rel = _fsdp_capture(tmp_path_factory, build, spec)
        _FSDP[build] = (out, tangle.check(rel, tangle=str(TANGLE)))
    return _FSDP[build]


def _shards_hold(r, grads=4):
    """Each rank's returned gradient shards, together, are the spec's gradient: one expectation per gradient."""
    return len(r.expectations) == grads and all(e["holds"] for e in r.expectations)


def test_real_fsdp_step_refines(tmp_path_factory):
    out, r = _real_fsdp(tmp_path_factory, "build")
    assert r.verdict == "refines", r.report
    assert _shards_hold(r), r.report
    assert "expect S.detach = concat(D0.as_strided_3, D1.as_strided_3, dim=0)" in (out / "check.rel").read_text()
    impl = (out / "impl.r0.py").read_text()
    # FSDP2's own buffer ops and in-place collectives are in the graph (lower/fsdp.h rewrites them)
    for op in ("fsdp.all_gather_copy_in", "fsdp.split_with_sizes_copy", "fsdp.chunk_cat",
               "c10d._allgather_base_", "c10d._reduce_scatter_base_"):
        assert op in impl, op
    assert "'0', 'avg'" in impl  # the group and the reduce op FSDP chose, recorded by tangle.fsdp


def test_real_fsdp_padded_dim0_refines(tmp_path_factory):
    out, r = _real_fsdp(tmp_path_factory, "build_padded", "spec_padded")
    assert r.verdict == "refines", r.report
    assert _shards_hold(r), r.report  # rank 1's shard of the 3-row gradient is its one real row
    assert "constant_pad_nd" in (out / "impl.r1.py").read_text()  # rank 1's shard of 3 rows is padded to 2


def test_real_fsdp_per_layer_refines(tmp_path_factory):
    out, r = _real_fsdp(tmp_path_factory, "build_per_layer")
    assert r.verdict == "refines", r.report
    assert _shards_hold(r), r.report
    # one reduce-scatter per layer; the backward all-gathers each resharded layer again
    impl = (out / "impl.r0.py").read_text()
    assert impl.count("c10d._reduce_scatter_base_.default(") == 2 and impl.count("c10d._allgather_base_.default(") == 4


def test_real_fsdp_divide_factor_one_is_a_violation(tmp_path_factory):
    out, r = _real_fsdp(tmp_path_factory, "build_divide_by_one")
    assert r.verdict == "violation", r.report
    assert "'0', 'sum'" in (out / "impl.r0.py").read_text()
    # the gradients are the ranks' sum: nothing relates a rank's 1/(local rows) seed to the spec's
    assert r.failure is not None and r.failure.op == "aten.div.Tensor", r.report


def test_real_fsdp_premul_sum_is_bad_input(tmp_path_factory):
    _, rel = _fsdp_capture(tmp_path_factory, "build_premul_sum", "spec")
    with pytest.raises(tangle.VerifyError, match="_reduce_scatter_base_.*premul_sum.*not supported"):
        tangle.check(rel, tangle=str(TANGLE))


# ---- FSDP2 in real use (issue 11): accumulation without sync, Shard(1) placement, mixed precision.
# All captured in ONE child process (pp.capture_fake_cases) by a module fixture; each test checks one.
_GAPS = {
    "no_sync": ("build_no_sync", "spec"),
    "no_sync_on_last": ("build_no_sync_on_last", "spec"),
    "shard_dim1": ("build_shard_dim1", "spec"),
    "shard_dim1_as_dim0": ("build_shard_dim1_gathered_on_dim0", "spec"),
    "mixed_precision": ("build_mixed_precision", "spec_mixed_precision"),
    "mixed_precision_never_reduce_scattered": ("build_mixed_precision_never_reduce_scattered", "spec_mixed_precision"),
    "mixed_precision_cast_from_wrong_param": ("build_mixed_precision_cast_from_wrong_param", "spec_mixed_precision"),
    "mp_bf16_reduce": ("build_mixed_precision_bf16_reduce", "spec_mixed_precision"),
    "mp_bf16_reduce_never_reduce_scattered": ("build_mixed_precision_bf16_reduce_never_reduce_scattered",
                                              "spec_mixed_precision"),
    "mp_output_f32": ("build_mixed_precision_output_f32", "spec_mixed_precision_output_f32"),
    "mp_output_f32_cast_from_wrong_param": ("build_mixed_precision_output_f32_cast_from_wrong_param",
                                            "spec_mixed_precision_output_f32"),
    "mp_no_input_cast": ("build_mixed_precision_no_input_cast", "spec_mixed_precision"),
    "mp_no_input_cast_never_reduce_scattered": ("build_mixed_precision_no_input_cast_never_reduce_scattered",
                                                "spec_mixed_precision"),
    # float16 last: the planted case leaves FSDP's float16 divide factors patched in the capture process
    "mp_fp16": ("build_mixed_precision_fp16", "spec_mixed_precision_fp16"),
    "mp_fp16_not_predivided": ("build_mixed_precision_fp16_not_predivided", "spec_mixed_precision_fp16"),
    "never_reduce_scattered": ("build_never_reduce_scattered", "spec"),
    "sum_loss_summed": ("build_sum_loss_summed", "spec_sum"),
    "sum_loss_averaged": ("build_sum_loss", "spec_sum"),
}


def _capture_fsdp_cases(tmp_path_factory, name, cases, ranks):
    """Every case {name: (builder, spec)} of fsdp_real_model captured in ONE child process."""
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")
    from tangle import pp
    root = tmp_path_factory.mktemp(name)
    pp.capture_fake_cases({k: (("fsdp_real_model", b), ("fsdp_real_model", s)) for k, (b, s) in cases.items()},
                          ranks, str(root))
    return root


@pytest.fixture(scope="module")
def fsdp_gaps(tmp_path_factory):
    return _capture_fsdp_cases(tmp_path_factory, "fsdp_gaps", _GAPS, 2)


def _gap(root, name):
    from tangle import pp
    return root / name, tangle.check(pp.write_relation(str(root / name), 2), tangle=str(TANGLE))


def test_real_fsdp_no_sync_accumulation_refines(fsdp_gaps):
    out, r = _gap(fsdp_gaps, "no_sync")
    assert r.verdict == "refines", r.report
    impl = (out / "impl.r0.py").read_text()
    # two micro-batches (two all-gathers), the first one's unsharded gradients accumulated in place
    # by autograd, ONE reduce-scatter of their sum
    assert impl.count("c10d._allgather_base_.default(") == 2 and impl.count("c10d._reduce_scatter_base_.default(") == 1
    assert impl.count("aten.add_.Tensor(") == 4
    assert _shards_hold(r), r.report
    # the spec's batch is the ranks' micro-batches in order: rank 0's two, then rank 1's
    rel = (out / "check.rel").read_text()
    assert "S.arg0_1 = concat(D0.arg0_1, D0.arg2_1, D1.arg0_1, D1.arg2_1, dim=0)" in rel


def test_real_fsdp_sync_off_on_the_last_micro_batch_is_a_violation(fsdp_gaps):
    out, r = _gap(fsdp_gaps, "no_sync_on_last")
    assert r.verdict == "violation", r.report
    # only the first micro-batch is reduce-scattered; the last one's gradient is never reduced, so
    # a rank's 1/(local rows) seed is never made the spec's 1/(global rows)
    assert (out / "impl.r0.py").read_text().count("c10d._reduce_scatter_base_.default(") == 1
    assert r.failure is not None and r.failure.op == "aten.div.Tensor", r.report


def test_real_fsdp_shard_dim1_refines(fsdp_gaps):
    out, r = _gap(fsdp_gaps, "shard_dim1")
    assert r.verdict == "refines", r.report
    impl = (out / "impl.r0.py").read_text()
    # FSDP's copy-out lays each weight's all-gathered chunks along dim 1 (cat.out into its buffer)
    assert impl.count("torch.ops.aten.cat.out(") == 2 and ", 1, out = " in impl
    rel = (out / "check.rel").read_text()
    assert "S._param_constant0 = concat(D0._fsdp_shard0, D1._fsdp_shard0, dim=1)" in rel
    assert _shards_hold(r), r.report  # the weights' gradient shards are column blocks (concat on dim 1)


def test_real_fsdp_shard_dim1_gathered_as_dim0_is_caught_at_the_first_matmul(fsdp_gaps):
    from tangle import pp
    out = fsdp_gaps / "shard_dim1_as_dim0"
    rel = pathlib.Path(pp.write_relation(str(out), 2))
    # its search ends at the per-operator limit: 10 CPU s instead of the default 60 keeps the test short
    # (the correct Shard(1) step's whole check takes 8-10 s)
    rel.write_text("option operator_seconds = 10\n" + rel.read_text())
    r = tangle.check(str(rel), tangle=str(TANGLE))
    # the ranks' column blocks laid out as rows: shapes fit, values do not. No relation of the
    # first layer's output is found; the search for one hits its limit (inconclusive, never refines)
    assert "aten.cat.out(" not in (out / "impl.r0.py").read_text()
    assert r.verdict in ("violation", "inconclusive"), r.report
    assert r.failure is not None and r.failure.op == "aten.addmm.default", r.report


def test_real_fsdp_mixed_precision_refines_over_the_reals(fsdp_gaps):
    # MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=f32) against the sequential step under the
    # same casts: FSDP's cast of each shard into a bf16 piece (_foreach_copy_) and its chunk_cat of
    # the bf16 gradients into the f32 reduce-scatter buffer are lowered to casts
    out, r = _gap(fsdp_gaps, "mixed_precision")
    impl = (out / "impl.r0.py").read_text()
    assert "aten._foreach_copy_.default(" in impl and 'empty_2: "f32[' in impl
    assert r.verdict == "refines", r.report
    assert _shards_hold(r), r.report
    # the spec sums each gradient over the batch in bf16 and casts it to f32; the ranks cast their
    # bf16 gradients to f32 before the reduce-scatter sums them: equal over the reals, not in bf16
    note = r.json.get("precision_note", "")
    assert note.startswith("refines over the reals; precision differs at ") and "bf16 -> f32" in note, r.report
    assert "S._to_copy_6 (" in note and "spec.py:" in note and "chunk_cat" in note, note
    assert "note: " + note in r.report


def test_real_fsdp_mixed_precision_never_reduce_scattered_is_a_violation(fsdp_gaps):
    # the mixed-precision step whose gradients are reduce-scattered over a group of one
    out, r = _gap(fsdp_gaps, "mixed_precision_never_reduce_scattered")
    assert r.verdict == "violation", r.report
    assert r.failure is not None and r.failure.op == "aten.div.Tensor", r.report
    assert "precision_note" not in r.json


def test_real_fsdp_mixed_precision_shard_cast_from_wrong_param_is_a_violation(fsdp_gaps):
    # rank 1 casts the first layer's bias piece from its weight shard's first elements: sizes fit
    out, r = _gap(fsdp_gaps, "mixed_precision_cast_from_wrong_param")
    assert "aten.slice.Tensor(" in (out / "impl.r1.py").read_text()
    assert r.verdict == "violation", r.report
    assert r.failure is not None and r.failure.op == "aten.addmm.default", r.report


def test_real_fsdp_bf16_reduce_refines_without_a_precision_note(fsdp_gaps):
    # MixedPrecisionPolicy(param_dtype=bf16) (reduce_dtype None; bf16 is clamped to None): the bf16
    # gradients are reduce-scattered in bf16 and the reduced flat shard is cast to f32, whose
    # as_strided pieces are the returned gradients
    out, r = _gap(fsdp_gaps, "mp_bf16_reduce")
    impl = (out / "impl.r0.py").read_text()
    assert 'getitem_8: "bf16[' in impl and 'aten._to_copy.default(getitem_8, dtype = torch.float32)' in impl
    assert r.verdict == "refines", r.report
    assert _shards_hold(r), r.report
    # each side casts the same bf16 sum to f32 (the spec its gradient, the ranks the reduced buffer
    # behind their as_strided pieces): matched through the certificate, no note. Matched by the
    # relation's leaves alone (the pieces, no cast), every gradient cast was reported on both sides.
    assert "precision_note" not in r.json and "precision differs" not in r.report, r.report


def test_real_fsdp_bf16_reduce_never_reduce_scattered_is_a_violation(fsdp_gaps):
    out, r = _gap(fsdp_gaps, "mp_bf16_reduce_never_reduce_scattered")
    assert "'0', 'avg'" not in (out / "impl.r0.py").read_text()
    assert r.verdict == "violation", r.report
    assert r.failure is not None and r.failure.op == "aten.div.Tensor", r.report


def test_real_fsdp_fp16_predivides_and_refines(fsdp_gaps):
    # param_dtype=float16 reduced in float16: FSDP fears overflow, divides the packed gradients by 2
    # (~sqrt of the ranks) before a sum reduce-scatter and by the rest (1) after, then casts to f32
    out, r = _gap(fsdp_gaps, "mp_fp16")
    impl = (out / "impl.r0.py").read_text()
    assert 'div_: "f16[' in impl and "'0', 'sum'" in impl
    assert r.verdict == "refines", r.report
    assert _shards_hold(r), r.report
    assert "precision_note" not in r.json, r.report  # cast after the float16 reduction, as the spec


def test_real_fsdp_fp16_not_predivided_is_a_violation(fsdp_gaps):
    # the same without the division: the ranks' gradients summed, never averaged
    out, r = _gap(fsdp_gaps, "mp_fp16_not_predivided")
    impl = (out / "impl.r0.py").read_text()
    assert "aten.div_" not in impl and "'0', 'sum'" in impl
    assert r.verdict == "violation", r.report
    assert r.failure is not None and r.failure.op == "aten.div.Tensor", r.report


def test_real_fsdp_output_dtype_f32_refines_with_the_reduce_note(fsdp_gaps):
    # output_dtype=f32: the root's bf16 output cast to f32 before the loss, on both sides (matched);
    # only the gradients' reduction differs: the spec sums in bf16, the ranks in f32
    out, r = _gap(fsdp_gaps, "mp_output_f32")
    assert r.verdict == "refines", r.report
    assert _shards_hold(r), r.report
    note = r.json.get("precision_note", "")
    assert "bf16 -> f32" in note and "chunk_cat" in note and "f32 -> bf16" not in note, note
    # the output cast (spec.py's first bf16 -> f32) is not in the note
    spec = (out / "spec.py").read_text().splitlines()
    first = next(i + 1 for i, line in enumerate(spec) if '"f32[' in line and "_to_copy.default(" in line)
    assert f"spec.py:{first}," not in note, (first, note)


def test_real_fsdp_output_dtype_f32_shard_cast_from_wrong_param_is_a_violation(fsdp_gaps):
    out, r = _gap(fsdp_gaps, "mp_output_f32_cast_from_wrong_param")
    assert r.verdict == "violation", r.report
    assert r.failure is not None and r.failure.op == "aten.addmm.default", r.report


def test_real_fsdp_cast_forward_inputs_off_on_the_root_refines(fsdp_gaps):
    # cast_forward_inputs=False on the root, per-layer fully_shard with the default on each Linear:
    # the first layer casts the f32 input on entry, where the spec casts it
    out, r = _gap(fsdp_gaps, "mp_no_input_cast")
    impl = (out / "impl.r0.py").read_text()
    assert impl.count("c10d._reduce_scatter_base_.default(") == 2
    assert r.verdict == "refines", r.report
    assert _shards_hold(r), r.report
    note = r.json.get("precision_note", "")
    assert "f32 -> bf16" not in note and "chunk_cat" in note, note


def test_real_fsdp_cast_forward_inputs_off_never_reduce_scattered_is_a_violation(fsdp_gaps):
    out, r = _gap(fsdp_gaps, "mp_no_input_cast_never_reduce_scattered")
    assert "'0', 'avg'" not in (out / "impl.r0.py").read_text()
    assert r.verdict == "violation", r.report
    assert r.failure is not None and r.failure.op == "aten.div.Tensor", r.report


def test_real_fsdp_cast_forward_inputs_off_everywhere_is_refused_by_torch(tmp_path_factory):
    # no fully_shard casts the f32 input: torch itself refuses the first bf16 matmul while capturing
    with pytest.raises(tangle.capture.CaptureError, match="mat1 and mat2 must have the same dtype"):
        _fsdp_capture(tmp_path_factory, "build_mixed_precision_no_input_cast_anywhere", "spec_mixed_precision")


def test_real_fsdp_gradients_never_reduce_scattered_is_a_violation(fsdp_gaps):
    # a custom reduce-scatter over a group of this rank alone, on its own chunk: every size fits and a
    # real run is silent, but no rank's gradient ever meets another's
    out, r = _gap(fsdp_gaps, "never_reduce_scattered")
    impl = (out / "impl.r0.py").read_text()
    assert "c10d._reduce_scatter_base_.default(" in impl and "'0', 'avg'" not in impl  # not the world group
    assert r.verdict == "violation", r.report
    # the ranks' 1/(local rows) seeds are never averaged into the spec's 1/(global rows): the mean's
    # division fails, and no expectation of a rank's gradient shard is established
    assert r.failure is not None and r.failure.op == "aten.div.Tensor", r.report
    assert "expectation not established" in r.report and "expectation holds" not in r.report, r.report


# ---- FSDP2 over more ranks than a parameter has rows: ranks 2 and 3 hold empty shards of the
# 2-row last layer (and FSDP pads their part of the flat buffer). Both cases in one capture process.
_NARROW = {"narrow": ("build_narrow", "spec_narrow"), "narrow_sum_loss": ("build_narrow_sum_loss", "spec_narrow")}


@pytest.fixture(scope="module")
def fsdp_narrow(tmp_path_factory):
    return _capture_fsdp_cases(tmp_path_factory, "fsdp_narrow", _NARROW, 4)


def test_real_fsdp_with_empty_shards_refines(fsdp_narrow):
    # each rank's parameter is a view of the all-gathered flat buffer; folding that chain
    # (src/lower/fold_rearrange.cpp) makes it the concat of the shards, the empty ones dropped
    # (concat-drop-empty). Without it this check ran out of its search budget (inconclusive).
    from tangle import pp
    out = fsdp_narrow / "narrow"
    assert '_fsdp_shard2: "f32[0, 16]"' in (out / "impl.r3.py").read_text()
    r = tangle.check(pp.write_relation(str(out), 4), tangle=str(TANGLE))
    assert r.verdict == "refines", r.report
    assert _shards_hold(r), r.report


def test_real_fsdp_with_empty_shards_summed_loss_is_a_violation(fsdp_narrow):
    from tangle import pp
    r = tangle.check(pp.write_relation(str(fsdp_narrow / "narrow_sum_loss"), 4), tangle=str(TANGLE))
    assert r.verdict == "violation", r.report
    assert r.failure is not None and r.failure.op == "aten.div.Tensor", r.report


# ---- FSDP2 with float16 mixed precision over 8 ranks: ranks 4-7 hold empty shards of the 4-row last
# layer, their padding (f32 zeros) cast into the f16 buffer. Both cases in one capture process (~6 s CPU).
_FP16_W8 = {k: _GAPS[k] for k in ("mp_fp16", "mp_fp16_not_predivided")}


@pytest.fixture(scope="module")
def fsdp_fp16_w8(tmp_path_factory):
    return _capture_fsdp_cases(tmp_path_factory, "fsdp_fp16_w8", _FP16_W8, 8)


def test_real_fsdp_fp16_with_empty_shards_refines(fsdp_fp16_w8):
    # The zeros of the f16 padding and of the f32 gradients are different tensors: a splat is typed
    # (ops::addSplat). When both were expand(0) over the dtype-less literal, one class held an f16 and
    # an f32 tensor: a type conflict, and the check was inconclusive.
    from tangle import pp
    out = fsdp_fp16_w8 / "mp_fp16"
    assert '_fsdp_shard2: "f32[0, 16]"' in (out / "impl.r4.py").read_text()
    r = tangle.check(pp.write_relation(str(out), 8), tangle=str(TANGLE))
    assert r.verdict == "refines", r.report
    assert "type conflict" not in r.report, r.report
    assert _shards_hold(r), r.report
    # the empty shards' padding is cast f32 -> f16 on ranks 4-7: zeros, exact, so no precision note
    assert "precision_note" not in r.json, r.report
    # each gradient shard is folded into rows of the reduced gradient (src/lower/fold_rearrange.h),
    # which every rank's shard shares: the final casts' searches were 27-60k e-nodes, now under 5k
    assert r.json["stats"]["enodes_max"] <= 8000, r.json["stats"]["enodes_max"]


def test_real_fsdp_fp16_with_empty_shards_not_predivided_is_a_violation(fsdp_fp16_w8):
    from tangle import pp
    r = tangle.check(pp.write_relation(str(fsdp_fp16_w8 / "mp_fp16_not_predivided"), 8), tangle=str(TANGLE))
    assert r.verdict == "violation", r.report
    assert r.failure is not None and r.failure.op == "aten.div.Tensor", r.report


def test_real_fsdp_summed_loss_reduce_scattered_with_sum_refines(fsdp_gaps):
    # a summed loss, its gradients reduce-scattered with sum and never divided: each spec gradient is the
    # ranks' sum, known first over the gradients FSDP packs into its buffer (chunk_cat); the pack is
    # followed to the reduce-scatter's returned slices, so every rank's shards are the spec's gradients
    out, r = _gap(fsdp_gaps, "sum_loss_summed")
    impl = (out / "impl.r0.py").read_text()
    assert "'0', 'sum'" in impl and "aten.div_" not in impl
    assert r.verdict == "refines", r.report
    assert "precision_note" not in r.json and "note: refines over the reals" not in r.report  # no cast anywhere
    assert _shards_hold(r), r.report


def test_real_fsdp_summed_loss_averaged_is_a_violation(fsdp_gaps):
    # the same summed loss under FSDP's default average: every rank returns half the spec's gradient
    out, r = _gap(fsdp_gaps, "sum_loss_averaged")
    assert "'0', 'avg'" in (out / "impl.r0.py").read_text()
    assert r.verdict == "violation", r.report
    assert r.failure is not None and "do not return" in r.failure.reason, r.report
