"""`tangle verify` and the Python API (tangle.verify, tangle.check).

Captures spawn a process per graph, so each target is captured once per module: HF Llama (1 layer,
TP=2) through the CLI and through the API, and a user module written into a temporary folder (a
column-parallel linear over gathered tokens, and its twin that forgets to gather the tokens).
"""
import json
import re
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import tangle  # noqa: E402  (imports neither torch nor transformers)
from tangle.binary import find_binary, locate_binary  # noqa: E402

TANGLE = find_binary()
V = sys.modules.get("tangle.verify") or __import__("importlib").import_module("tangle.verify")

USER_MODULE = '''
"""Column-parallel linear over sequence-parallel tokens: gather the tokens, multiply by this rank's
rows of w, gather the output features. build_buggy forgets to gather the tokens."""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

T, IN, OUT = 4, 6, 8


def weights():
    g = torch.Generator().manual_seed(0)
    return torch.randn(T, IN, generator=g), torch.randn(OUT, IN, generator=g)


def spec():
    x, w = weights()

    def layer(x, w):
        return torch.relu(x @ w.t())

    return layer, (x, w)


def build(rank, world_size, gather_tokens=True):
    x, w = weights()
    t, o = T // world_size, OUT // world_size

    def layer(x, w):
        if gather_tokens:
            x = funcol.all_gather_tensor(x, 0, dist.group.WORLD)
        return funcol.all_gather_tensor(torch.relu(x @ w.t()), 1, dist.group.WORLD)

    return layer, (x[rank * t:(rank + 1) * t].contiguous(), w[rank * o:(rank + 1) * o].contiguous())


def build_buggy(rank, world_size):
    return build(rank, world_size, gather_tokens=False)


def build_raises(rank, world_size):
    raise RuntimeError(f"no weights for rank {rank}")


def build_data_dependent(rank, world_size):
    layer, args = build(rank, world_size)

    def branching(x, w):
        if x.sum() > 0:  # data-dependent control flow: no single graph
            x = x + 1
        return layer(x, w)

    return branching, args


def relation(world_size):
    # argument names of `layer` (S.x, D*.w) and S.output / D*.output are replaced by the graphs' names
    return """S.x = shard(D*.x, dim=0)
S.w = shard(D*.w, dim=0)
expect S.output = D*.output   # every rank holds the full output
"""
'''


def _need_torch():
    pytest.importorskip("torch", reason="PyTorch is not installed (scripts/install-deps.sh installs torch==2.13.0)")


def _need_binary():
    if TANGLE is None:
        pytest.skip(f"{locate_binary()[0]} is not built (or set TANGLE_BIN)")


def _env(**extra):
    env = dict(os.environ)
    env.pop("TANGLE_BIN", None)  # `tangle verify` sets it to itself
    env.update(extra)
    return env


def _tangle_verify(args, cwd, timeout=600):
    return subprocess.run([str(TANGLE), "verify", *args], capture_output=True, text=True, cwd=cwd, env=_env(),
                          timeout=timeout)


def _one_error_line(r):
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2, r.stdout + r.stderr
    assert lines and lines[-1].startswith("tangle verify: error: "), r.stderr
    assert not any(line.startswith("Traceback") for line in lines), r.stderr
    return lines[-1]


# ---------------------------------------------------------------- no torch needed

def test_check_api_parses_the_json_report():
    _need_binary()
    r = tangle.check(os.path.join(ROOT, "examples/paper/bug4_offdiag/check.rel"), tangle=str(TANGLE))
    assert isinstance(r, tangle.CheckResult)
    assert (r.verdict, r.exit_code) == ("violation", 1)
    assert r.failure.operator == "S.mm" and r.failure.op == "aten.mm.default"
    assert r.failure.inputs_read == ["S.A", "S.B"]
    assert r.failure.input_relations["S.A"] == ["concat(D0.A, D1.A, dim=0)"]
    assert r.failure.source_file == "/models/moe_expert.py" and r.failure.source_line == 31
    assert r.failure.code == "C = A @ B"
    assert "model source of S.mm: /models/moe_expert.py:31 in forward: C = A @ B" in r.report
    ok = tangle.check(os.path.join(ROOT, "examples/paper/matmul_sub_rs/check.rel"), tangle=str(TANGLE))
    assert (ok.verdict, ok.exit_code, ok.failure) == ("refines", 0, None)
    assert ("S.sub", "concat(D0.sub, D1.sub, dim=0)") in ok.output_relation


def test_check_api_bad_relation_is_one_error(tmp_path):
    _need_binary()
    with pytest.raises(tangle.VerifyError, match="no such relation file"):
        tangle.check(str(tmp_path / "missing.rel"), tangle=str(TANGLE))


def test_parameters_named_from_placeholder_maps(tmp_path):
    (tmp_path / "spec.py").write_text("")
    (tmp_path / "spec.params.json").write_text(json.dumps(dict(placeholders=[
        dict(name="arg7_1", kind="parameter", fqn="model.layers.0.self_attn.o_proj.weight", placement="Replicate",
             global_shape=[64, 64], local_shape=[64, 64])])))
    (tmp_path / "impl.r0.params.json").write_text(json.dumps(dict(placeholders=[
        dict(name="arg12_1", kind="parameter", fqn="model.layers.0.self_attn.o_proj.weight", placement="Shard(1)",
             global_shape=[64, 64], local_shape=[64, 32]),
        dict(name="arg13_1", kind="opaque", fqn="model.layers.0.self_attn.o_proj.weight")])))
    params = V.parameters_named(["S.arg7_1", "D0.arg12_1", "D0.arg13_1", "S.mm"], str(tmp_path / "spec.py"),
                                [str(tmp_path / "impl.r0.py")], str(tmp_path / "none.rel"))
    assert [str(p) for p in params] == [
        "S.arg7_1 = model.layers.0.self_attn.o_proj.weight (Shard(1), [64, 64])",
        "D0.arg12_1 = model.layers.0.self_attn.o_proj.weight on rank 0 (Shard(1), local [64, 32] of [64, 64])",
        "D0.arg13_1 = model.layers.0.self_attn.o_proj.weight on rank 0 (device mesh of the DTensor, no data)"]


def test_spec_and_rank_parameter_names_must_match(tmp_path):
    def write(name, fqns):
        (tmp_path / name).write_text(json.dumps(dict(placeholders=[
            dict(name=f"arg{i}_1", kind="parameter", fqn=f) for i, f in enumerate(fqns)])))
    write("spec.params.json", ["a.weight", "b.weight"])
    write("impl.r0.params.json", ["a.weight", "b.weight"])
    write("impl.r1.params.json", ["a.weight", "c.weight"])
    with pytest.raises(tangle.VerifyError, match="rank 1 has no parameter named 'b.weight'"):
        V._check_fqns(str(tmp_path / "spec.params.json"),
                      [str(tmp_path / "impl.r0.params.json"), str(tmp_path / "impl.r1.params.json")])


@pytest.mark.parametrize("args, message", [
    (["hf:gpt"], "unknown model family 'gpt'"),
    (["justaname"], "neither hf:FAMILY"),
    (["hf:llama", "--tp", "1"], "at least 2"),
    (["hf:llama", "--relation", "x.rel"], "for MODULE:FUNCTION targets"),
    (["hf:llama", "--no-such-flag"], "unrecognized arguments"),
    (["torchtitan:gpt"], "unknown torchtitan model 'gpt'"),
    (["torchtitan:llama3", "--tp", "1"], "at least 2"),
    (["torchtitan:llama3", "--backend", "full_dtensor"], "unknown --backend 'full_dtensor'"),
    (["hf:llama", "--sp"], "torchtitan: targets only"),
])
def test_bad_arguments_are_one_line(tmp_path, args, message):
    _need_binary()
    r = _tangle_verify([*args, "--out", str(tmp_path / "out")], cwd=tmp_path)
    assert message in _one_error_line(r)
    assert not (tmp_path / "out").exists()


def test_torch_missing_is_one_line(tmp_path):
    _need_binary()
    # -S: no site-packages, so neither torch nor transformers can be found
    r = subprocess.run([sys.executable, "-S", "-m", "tangle.verify", "hf:llama", "--tangle", str(TANGLE)],
                       capture_output=True, text=True, cwd=tmp_path,
                       env=_env(PYTHONPATH=os.path.join(ROOT, "python")), timeout=60)
    assert "needs the Python package 'torch', which is not installed" in _one_error_line(r)


def test_untested_torch_version_is_one_error(monkeypatch):
    _need_torch()
    monkeypatch.setitem(V.TESTED_VERSIONS, "torch", "1.0")
    monkeypatch.delenv("TANGLE_ALLOW_UNTESTED_VERSIONS", raising=False)
    with pytest.raises(tangle.VerifyError, match=r"needs torch 1\.0\.x, found 2\."):
        V._need("torch", "capturing graphs")
    monkeypatch.setenv("TANGLE_ALLOW_UNTESTED_VERSIONS", "1")
    V._need("torch", "capturing graphs")  # the user takes the risk


@pytest.mark.parametrize("args, message", [
    (["hf:llama", "--shape", "llama9-1t"], "unknown --shape 'llama9-1t'"),
    (["hf:llama", "--plan", "lm_head"], "--plan needs MODULE_PATTERN=STYLE"),
    (["some.module:build", "--plan", "lm_head=colwise"], "--plan applies to hf: targets only"),
    (["megatron:gpt", "--shape", "llama3-8b"], "unknown --shape 'llama3-8b' for megatron:gpt"),
    (["hf:llama", "--fake"], "--fake applies to megatron: targets only"),
])
def test_bad_hf_options_are_one_line(tmp_path, args, message):
    _need_binary()
    r = _tangle_verify([*args, "--out", str(tmp_path / "out")], cwd=tmp_path)
    assert message in _one_error_line(r)
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- user code

@pytest.fixture(scope="module")
def user_dir(tmp_path_factory):
    _need_torch()
    _need_binary()
    d = tmp_path_factory.mktemp("user")
    (d / "tp_colpar_user.py").write_text(textwrap.dedent(USER_MODULE))
    return d


@pytest.fixture(scope="module")
def user_good(user_dir):
    sys.path.insert(0, str(user_dir))
    try:
        return tangle.verify("tp_colpar_user:build", tp=2, out=str(user_dir / "good"), tangle=str(TANGLE),
                             log=lambda msg: None)
    finally:
        sys.path.remove(str(user_dir))


@pytest.fixture(scope="module")
def user_buggy(user_dir):
    r = _tangle_verify(["tp_colpar_user:build_buggy", "--ranks", "2", "--json", str(user_dir / "bug.json")],
                       cwd=user_dir)
    with open(user_dir / "bug.json") as f:
        return r, json.load(f)


def test_user_code_refines(user_good, user_dir):
    assert (user_good.verdict, user_good.exit_code) == ("refines", 0), user_good.report
    rel = (user_dir / "good" / "check.rel").read_text()
    # argument names were replaced by the placeholders that hold them (Dynamo orders them its own way)
    assert "S.x" not in rel and "D*.w" not in rel and "S.output" not in rel, rel
    assert [e["holds"] for e in user_good.expectations] == [True, True]
    assert (user_dir / "good" / "report.json").exists() and user_good.out_dir == str(user_dir / "good")


def test_verify_jobs_2_gives_the_same_report(user_buggy, user_dir):
    r1, j1 = user_buggy
    r2 = _tangle_verify(["tp_colpar_user:build_buggy", "--ranks", "2", "--jobs", "2", "--json",
                         str(user_dir / "bug_j2.json")], cwd=user_dir)
    with open(user_dir / "bug_j2.json") as f:
        j2 = json.load(f)
    def same(text):  # timings and the temporary capture folders aside
        text = re.sub(r"stats: [0-9.e+-]+ s \(import [0-9.e+-]+ s\)", "stats:", text)
        return re.sub(r"tangle-verify-[A-Za-z0-9_]+", "tangle-verify-TMP", text)
    assert r2.returncode == r1.returncode == 1, r2.stdout + r2.stderr
    assert same(r2.stdout) == same(r1.stdout)
    j1, j2 = dict(j1, stats=dict(j1["stats"])), dict(j2, stats=dict(j2["stats"]))
    for j in (j1, j2):
        del j["stats"]["seconds"], j["stats"]["import_seconds"]
    assert same(json.dumps(j2, sort_keys=True)) == same(json.dumps(j1, sort_keys=True))


def test_user_code_missing_collective_names_the_parameter(user_buggy):
    r, j = user_buggy
    assert r.returncode == 1, r.stdout + r.stderr
    assert "verdict: violation" in r.stdout
    assert "failing operator: S.mm (aten.mm.default)" in r.stdout, r.stdout
    # the weight is read through its transpose; the report names the argument each placeholder holds
    involved = {p["name"]: p["fqn"] for p in j["parameters_involved"]}
    w = [n for n, fqn in involved.items() if fqn == "w" and n.startswith("S.")]
    assert w, j["parameters_involved"]
    assert f"  {w[0]} = w (" in r.stdout, r.stdout
    assert [x["tensor"] for x in j["failure"]["inputs_read"]].count(w[0]) == 1
    assert "model source of S.mm: " in r.stdout and "tp_colpar_user.py" in r.stdout
    assert "rank 1/2: captured impl.r1.py" in r.stderr  # progress per rank


@pytest.mark.parametrize("args, message", [
    (["no_such_module_xyz:build"], "cannot import module 'no_such_module_xyz': ModuleNotFoundError"),
    (["tp_colpar_user:nope"], "module 'tp_colpar_user' has no function 'nope'"),
    (["tp_colpar_user:build_raises"], "capturing rank 0/2 failed: RuntimeError: no weights for rank 0"),
    (["tp_colpar_user:build_data_dependent"], "capturing rank 0/2 failed: Unsupported: Data-dependent branching "
                                              "(at "),
    (["tp_colpar_user:build", "--relation", "bad.rel"], "bad.rel:2: tensor 'S.nope' does not exist"),
    (["tp_colpar_user:build", "--layers", "2"], "--layers applies to hf:, megatron: and torchtitan: targets only"),
])
def test_user_code_bad_input_is_one_line(user_dir, args, message):
    (user_dir / "bad.rel").write_text("S.x = shard(D*.x, dim=0)\nS.nope = D*.w\n")
    out = user_dir / "bad_out"
    shutil.rmtree(out, ignore_errors=True)
    r = _tangle_verify([*args, "--out", str(out)], cwd=user_dir)
    assert message in _one_error_line(r)
    if "--relation" in args:  # refused by the checker: the complete capture stays for inspection, no report
        assert (out / "check.rel").exists() and not (out / "report.json").exists()
    else:  # refused before or during capture: nothing written
        assert not out.exists()
    assert not [p for p in os.listdir(user_dir) if p.startswith(".tangle-verify-")]


# ---------------------------------------------------------------- HF Llama

def _need_hf():
    _need_torch()
    pytest.importorskip("transformers",
                        reason="transformers is not installed (scripts/install-deps.sh installs transformers==5.23.0)")
    _need_binary()


@pytest.fixture(scope="module")
def llama_cli(tmp_path_factory):
    _need_hf()
    d = tmp_path_factory.mktemp("llama_cli")
    r = _tangle_verify(["hf:llama", "--tp", "2", "--layers", "1", "--json", str(d / "report.json")], cwd=d)
    return r, d


def test_tangle_verify_hf_llama_refines(llama_cli):
    r, d = llama_cli
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "verdict: refines"
    assert "expectation holds: " in r.stdout
    assert "rank 0/2: captured impl.r0.py" in r.stderr and "rank 1/2: captured impl.r1.py" in r.stderr
    with open(d / "report.json") as f:
        j = json.load(f)
    assert j["verdict"] == "refines" and j["verify"]["target"] == "hf:llama"
    assert os.listdir(d) == ["report.json"]  # the temporary folder is gone


@pytest.fixture(scope="module")
def llama_api(tmp_path_factory):
    _need_hf()
    out = tmp_path_factory.mktemp("llama_api") / "out"
    return tangle.verify("hf:llama", tp=2, layers=1, out=str(out), tangle=str(TANGLE), log=lambda msg: None), out


def test_api_hf_llama_refines(llama_api):
    r, out = llama_api
    assert isinstance(r, tangle.VerifyResult)
    assert (r.verdict, r.exit_code, r.failure) == ("refines", 0, None), r.report
    assert r.output_relation and all(t == r.output_relation[0][0] for t, _ in r.output_relation)
    assert sorted(os.listdir(out)) == sorted(["spec.py", "spec.params.json", "impl.r0.py", "impl.r0.params.json",
                                              "impl.r1.py", "impl.r1.params.json", "check.rel", "report.json"])
    # the same folder checks again through tangle.check, parameters found beside the graphs
    again = tangle.check(str(out / "check.rel"), tangle=str(TANGLE))
    assert again.verdict == "refines"


def test_hf_llama_without_o_proj_all_reduce_names_o_proj(llama_api, tmp_path):
    """The ranks' graphs with the attention output's all-reduce replaced by a copy: the residual add
    fails, and the report names the o_proj weight that its partial-sum input comes from."""
    _, out = llama_api
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    for r in range(2):
        path = broken / f"impl.r{r}.py"
        lines = path.read_text().splitlines(keepends=True)
        reduces = [i for i, line in enumerate(lines) if "_c10d_functional.all_reduce.default(" in line]
        assert len(reduces) == 3, "embedding, attention output, MLP output"
        i = reduces[1]
        arg = lines[i].split("all_reduce.default(")[1].split(",")[0]
        lines[i] = lines[i].split("torch.ops.")[0] + f"torch.ops.aten.clone.default({arg})\n"
        path.write_text("".join(lines))
    r = tangle.check(str(broken / "check.rel"), tangle=str(TANGLE))
    assert (r.verdict, r.exit_code) == ("violation", 1), r.report
    assert r.failure.op == "aten.add.Tensor" and "modeling_llama.py" in r.failure.source_file
    assert r.failure.code == "hidden_states = residual + hidden_states"
    o_proj = [p for p in r.failure.parameters if p.fqn == "model.layers.0.self_attn.o_proj.weight"]
    assert o_proj and o_proj[0].placement == "Shard(1)", r.report
    assert f"  {o_proj[0].name} = model.layers.0.self_attn.o_proj.weight (Shard(1), [64, 64])" in r.report
