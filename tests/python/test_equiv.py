"""HF transformers vs vLLM (CPU, TP=1): `tangle equiv`, `tangle propose` and the checker on both graphs.

Each model is captured once per session (python -m tangle.vllm_capture in the pinned vLLM environment,
~/.cache/tangle/vllm-venv made by scripts/install-deps.sh; the tests skip with a message without it).
What is checked: the relation proposed from values (HF's q/k/v and gate/up weights as slices of vLLM's
fused qkv_proj / gate_up_proj), the decoder layer up to the q/k/v projections (embedding, RMSNorm vs
vLLM's IR rms_norm, the fused projection and its split) and from the attention output on (vLLM's
fused_add_rms_norm, the merged gate_up + SiluAndMul, final norm, logits) proved equal, and planted
bugs reported at the right operator; the whole model (rotary by src/lemmas/rotary.cpp, attention,
logits) proved for both families (Llama with 2 decoder layers); each planted bug a violation at the right HF line, and localized
(from values) at the right pair of HF / vLLM source lines. See docs/equiv.md, "Two frameworks, one model".
"""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tangle import equiv  # noqa: E402  (imports neither torch nor vLLM)
from tangle.binary import find_binary  # noqa: E402

TANGLE = find_binary()
needs_vllm = pytest.mark.skipif(equiv.vllm_python() is None,
                                reason="the vLLM environment is missing (scripts/install-deps.sh makes "
                                       "~/.cache/tangle/vllm-venv); HF vs vLLM tests skipped")


def _capture(tmp_path_factory, family, bug=None, layers=1):
    out = str(tmp_path_factory.mktemp(f"{family}-{bug or 'clean'}"))
    equiv.capture(family, out, layers=layers, bug=bug)
    return out


VARIANTS = ("clean",) + equiv.BUGS


@pytest.fixture(scope="session")
def qwen2_variants(tmp_path_factory):
    """The clean Qwen2 and one copy per planted bug, captured in one process (vLLM's import is the slow part)."""
    out = str(tmp_path_factory.mktemp("qwen2"))
    equiv.capture("qwen2", out, layers=1, bugs=list(VARIANTS))
    return {v: os.path.join(out, v) for v in VARIANTS}


@pytest.fixture(scope="session")
def qwen2(qwen2_variants):
    return qwen2_variants["clean"]


@pytest.fixture(scope="session")
def qwen2_rms_eps(qwen2_variants):
    return qwen2_variants["rms-eps"]


@pytest.fixture(scope="session")
def llama(tmp_path_factory):
    """Llama with 2 decoder layers (Qwen2 has 1): the same capture, the second layer proved after the first."""
    return _capture(tmp_path_factory, "llama", layers=2)


def _propose(out, *extra):
    rel = os.path.join(out, "equiv.rel")
    args = [TANGLE, "propose", os.path.join(out, "hf.values.json"), os.path.join(out, "vllm.values.json"), "-o", rel]
    for t in extra:
        args += ["--tensor", t]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return rel, open(rel).read()


def _check(rel, *lines):
    if lines:
        with open(rel, "a") as f:
            f.write("\n".join(lines) + "\n")
    r = subprocess.run([TANGLE, "check", rel, "--quiet"], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout


def _node_after(graph, code):
    """The node defined on the first line after a source comment containing `code`."""
    lines = open(graph).read().splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("# File:") and code in line:
            m = re.match(r"\s*(\w+)(?::\s*\"[^\"]*\")? = ", lines[i + 1])
            return m.group(1)
    raise AssertionError(f"no source line with {code!r} in {graph}")


def _relation_of(text, fqn_part):
    for line in text.splitlines():
        if line.startswith("S.") and fqn_part in line.split("#", 1)[-1].split("<-")[0]:
            return line.split("=", 1)[1].split("#")[0].strip()
    raise AssertionError(f"no relation for {fqn_part}:\n{text}")


def _projections(out):
    g = os.path.join(out, "hf.py")
    text = open(g).read()
    names = []
    for proj in ("q_proj", "k_proj", "v_proj"):
        start = text.index(f"self.{proj}(")
        names.append(re.search(r"\n\s*(addmm(?:_\d+)?|mm(?:_\d+)?): ", text[start:]).group(1))
    return names


def _attention_output(out):
    """The o_proj result HF adds to the residual (the tensor after which vLLM's code is proved again)."""
    g = os.path.join(out, "hf.py")
    add = _node_after(g, "hidden_states = residual + hidden_states")
    line = next(l for l in open(g).read().splitlines() if re.match(rf"\s*{add}: ", l))
    arg = re.search(r"add\.Tensor\((\w+), (\w+)\)", line).group(2)
    # through HF's view back to [1, T, H]: relate the [T, H] product it reshapes
    src = next(l for l in open(g).read().splitlines() if re.match(rf"\s*{arg}: ", l))
    m = re.search(r"_unsafe_view\.default\((\w+),", src)
    return m.group(1) if m else arg


@needs_vllm
@pytest.mark.parametrize("family", ["qwen2", "llama"])
def test_relation_is_proposed_from_values(family, request):
    out = request.getfixturevalue(family)
    _, text = _propose(out)
    assert _relation_of(text, "q_proj.weight") == "slice(D0.arg4_1, dim=0, start=0, end=32)" or \
        re.fullmatch(r"slice\(D0\.arg\d+_1, dim=0, start=0, end=32\)", _relation_of(text, "q_proj.weight"))
    k = _relation_of(text, "k_proj.weight")
    v = _relation_of(text, "v_proj.weight")
    assert re.fullmatch(r"slice\(D0\.arg\d+_1, dim=0, start=32, end=48\)", k), k
    assert re.fullmatch(r"slice\(D0\.arg\d+_1, dim=0, start=48, end=64\)", v), v
    assert re.fullmatch(r"slice\(D0\.arg\d+_1, dim=0, start=0, end=64\)", _relation_of(text, "gate_proj.weight"))
    assert re.fullmatch(r"slice\(D0\.arg\d+_1, dim=0, start=64, end=128\)", _relation_of(text, "up_proj.weight"))
    assert "qkv_proj.weight" in text and "gate_up_proj.weight" in text  # the fused vLLM names, shown to the user
    assert "reshape(D0.arg0_1, [1, 8])" in text  # HF's [1, T] ids vs vLLM's flat [T]
    if family == "qwen2":
        assert re.fullmatch(r"slice\(D0\.arg\d+_1, dim=0, start=32, end=48\)", _relation_of(text, "k_proj.bias"))


@needs_vllm
@pytest.mark.parametrize("family", ["qwen2", "llama"])
def test_only_inputs_are_taken_from_values(family, request):
    """The rotary tables are proved (vLLM's cache is computed in the graph from its inv_freq buffer): the
    buffers are related as inputs; the causal mask, computed from constants alone, is no cut point: the
    checker relates it by exact evaluation."""
    out = request.getfixturevalue(family)
    _, text = _propose(out)
    assert re.fullmatch(r"D0\.arg\d+_1", _relation_of(text, "rotary_emb.inv_freq")), text
    assert "cut point" not in text, text
    assert re.search(r"^# S\.where: computed from constants alone: the checker relates it by exact evaluation",
                     text, re.M), text  # HF's mask, from masking_utils
    hf = open(os.path.join(out, "hf.py")).read()
    assert re.search(r"\n\s*where: .*\n", hf) and "masking_utils" in hf
    assert "cos_sin_cache" not in open(os.path.join(out, "vllm.params.json")).read()  # not a buffer any more


@needs_vllm
@pytest.mark.parametrize("family", ["qwen2", "llama"])
def test_layer_up_to_the_projections_is_proved(family, request):
    out = request.getfixturevalue(family)
    rel, _ = _propose(out)
    code, report = _check(rel, "output " + ", ".join(f"S.{n}" for n in _projections(out)))
    assert code == 0 and report.startswith("verdict: refines"), report


@needs_vllm
@pytest.mark.parametrize("family", ["qwen2", "llama"])
def test_layer_from_the_attention_output_on_is_proved(family, request):
    out = request.getfixturevalue(family)
    rel, text = _propose(out, _attention_output(out))
    assert "cut point" in text
    code, report = _check(rel)
    assert code == 0 and report.startswith("verdict: refines"), report
    assert "output relation:" in report


@needs_vllm
def test_wrong_rmsnorm_epsilon_is_reported_at_the_norm(qwen2_rms_eps):
    rel, _ = _propose(qwen2_rms_eps)
    code, report = _check(rel, "output " + ", ".join(f"S.{n}" for n in _projections(qwen2_rms_eps)))
    assert code == 1, report
    first = report.splitlines()[1]
    # the first operator HF computes differently: rsqrt(variance + eps) of the input RMSNorm
    assert "failing operator: S.add" in first and "hf.py" in first, report
    assert "variance_epsilon" in report.splitlines()[2], report


@needs_vllm
def test_equiv_command_shows_the_relation_and_runs_the_checker(qwen2, tmp_path):
    # the front end on a capture it did not make: propose + check through `tangle equiv`'s own code path
    import shutil
    out = str(tmp_path / "e")
    shutil.copytree(qwen2, out)
    logged = []
    orig = equiv.capture
    try:
        equiv.capture = lambda *a, **k: None  # already captured
        code, text, report = equiv.equiv("qwen2", out, log=logged.append)
    finally:
        equiv.capture = orig
    assert "qkv_proj.weight" in text and logged[0].startswith("relation proposed from values")
    # End to end: rotary (src/lemmas/rotary.cpp), attention and the logits, proved; the mask by evaluation
    assert code == 0 and report.startswith("verdict: refines"), report
    assert "output relation:" in report
    assert re.search(r"related by evaluation .*\n  S\.where = reshape\(D0\.where, \[1, 1, 8, 8\]\)", report), report


@needs_vllm
def test_llama_is_proved_end_to_end(llama):
    # both decoder layers are in the graphs and their weights in the proposed relation
    rel, text = _propose(llama)
    assert "layers.1.self_attn.qkv_proj" in text and "layers.1.mlp.down_proj" in text, text
    code, report = _check(rel)
    assert code == 0 and report.startswith("verdict: refines"), report


@needs_vllm
@pytest.mark.parametrize("bug, spec_code", [
    ("qkv-order", "k_embed = (k * cos)"),          # k (really v) first used in its rotary
    ("rope-gptj", "apply_rotary_pos_emb"),         # the rotary (of q or k)
    ("rope-theta", "freqs = position_ids"),        # HF's rotary frequencies: no longer hidden behind a cut point
    ("rms-eps", "torch.rsqrt(variance + self.variance_epsilon)"),
    ("no-residual", "hidden_states = residual + hidden_states"),
    ("scale", "* scaling"),
])
def test_planted_bug_is_not_refines(bug, spec_code, qwen2_variants):
    rel, _ = _propose(qwen2_variants[bug])
    code, report = _check(rel)
    assert code == 1 and report.startswith("verdict: violation"), report
    source = report.splitlines()[2]
    assert source.strip().startswith("source:") and spec_code in source, report
    assert "vllm.py" in report  # the implementation operators next to it


@needs_vllm
def test_strict_mask_is_not_related_by_evaluation(qwen2_variants):
    """vLLM's mask with `<` holds values HF's never does: no relation by evaluation, not refines, and the
    report names HF's mask. (Not yet a violation: the walk then searches HF's position arithmetic and
    stops at a limit, exit 3.)"""
    rel, _ = _propose(qwen2_variants["mask"])
    code, report = _check(rel)
    assert code in (1, 3) and not report.startswith("verdict: refines"), report
    assert "not related by evaluation: S.where: no implementation tensor computed from constants" in report, report


def test_missing_vllm_environment_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("TANGLE_VLLM_PYTHON", str(tmp_path / "no-python"))
    env = dict(os.environ, TANGLE_VLLM_PYTHON=str(tmp_path / "no-python"))
    r = subprocess.run([TANGLE, "equiv", "qwen2", "--out", str(tmp_path / "o")], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 2
    assert r.stderr.strip().startswith("tangle equiv: error: the vLLM environment is missing"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def _localize(out):
    r = subprocess.run([TANGLE, "propose", os.path.join(out, "hf.values.json"), os.path.join(out, "vllm.values.json"),
                        "--localize"], capture_output=True, text=True)
    return r.returncode, r.stdout


@needs_vllm
def test_clean_model_has_no_value_divergence(qwen2):
    code, text = _localize(qwen2)
    assert code == 0 and text.startswith("no divergence"), text


@needs_vllm
@pytest.mark.parametrize("bug, spec_code", [
    ("rms-eps", "torch.rsqrt(variance + self.variance_epsilon)"),  # the input RMSNorm
    ("qkv-order", "k_embed = (k * cos)"),                            # k (really v) first used in rotary
    ("rope-gptj", "q_embed = (q * cos)"),                            # the rotary of q
    ("rope-theta", "q_embed = (q * cos)"),                           # the rotary of q (its table is wrong)
    ("scale", "attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling"),
    ("no-residual", "hidden_states = residual + hidden_states"),
])
def test_planted_bug_is_localized_at_the_right_pair(bug, spec_code, qwen2_variants):
    code, text = _localize(qwen2_variants[bug])
    assert code == 1, text
    spec_line = next(l for l in text.splitlines() if l.strip().startswith("spec source:"))
    assert spec_code in spec_line, text
    # the vLLM side of the pair: its counterpart's source line, or (when vLLM has no operator of that
    # size over the same inputs, e.g. k and v swapped) the vLLM tensors its inputs agree with
    impl = [l for l in text.splitlines() if l.strip().startswith(("implementation source:", "its inputs agree:"))]
    assert impl and ("/vllm/" in impl[0] or "vllm_capture.py" in impl[0] or "~ D0." in impl[0]), text
