"""`flagbot check-plugins` on extracts of the real registries (testing/resources/plugins/).

Each defect case is one line of a real file changed the way a vendor would get it wrong; the
checker must report exactly that line, with that rule, as the only error.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flagbot.hooks import check_plugins as cli
from flagbot.hooks.findings import ERROR, WARNING, Finding
from flagbot.hooks.plugins.check import check_plugins
from tests.hooks.conftest import MakeRepo

RESOURCES = Path(__file__).resolve().parents[2] / "testing" / "resources" / "plugins"
VCONF = "vllm_fl/dispatch/config"
SCONF = "sglang_fl/dispatch/config"
MREG = "megatron/plugin/override_registry.py"

# The real trees' warnings (see testing/resources/plugins/README.md); no errors.
EXPECTED_WARNINGS = {
    "vllm": {(f"{VCONF}/musa.yaml", 0, "plugin-config-unreachable"),
             (f"{VCONF}/metax.yaml", 15, "plugin-oot-unknown"),
             (f"{VCONF}/metax.yaml", 16, "plugin-oot-unknown"),
             (f"{VCONF}/kunlunxin.yaml", 6, "plugin-token-blacklisted")},
    "sglang": {(f"{SCONF}/kunlunxin.yaml", 0, "plugin-config-unreachable")},
    "megatron": set(),
}

# (tree, file, line as in the extract, the line with the defect, rule). The error is on the
# changed line, except that a whole op entry without a match is reported at the op's key.
DEFECTS = [
    # an op whose only token matches no implementation on MetaX: RuntimeError at first call
    ("vllm", f"{VCONF}/metax.yaml", "    - vendor:metax", "    - vendor:cuda",
     "plugin-no-implementation"),
    ("vllm", f"{VCONF}/metax.yaml", "  topk_softmax: [flagos, reference]",
     "  topk_softmax: [vendor:cuda]", "plugin-no-implementation"),
    # the whole file silently replaced by defaults
    ("vllm", f"{VCONF}/nvidia.yaml", "  silu_and_mul: [flagos, vendor, reference]",
     "  silu_and_mul: flagos: vendor", "plugin-yaml-syntax"),
    ("vllm", f"{VCONF}/nvidia.yaml", "  silu_and_mul: [flagos, vendor, reference]",
     "  silu_and_mul: [flagos, vendr, reference]", "plugin-unknown-token"),
    # vllm-plugin-FL's metax.yaml listed `flaggems` for four ops from 2d9ae03 (#90) until
    # 9c7d4c7 (#149): never matched, so FlagGems kernels were silently skipped on MetaX
    ("vllm", f"{VCONF}/metax.yaml", "  silu_and_mul: [flagos, reference]",
     "  silu_and_mul: [flaggems, reference]", "plugin-unknown-token"),
    ("vllm", f"{VCONF}/nvidia.yaml", "    - vendor", "    - vendor:nvidia",
     "plugin-unknown-vendor"),
    # vllm-plugin-FL's hygon.yaml routed four ops to vendor:hygon from 000054d (#179) until
    # 6bd3124 (#223) added a hygon backend: on Hygon the token never matched
    ("vllm", f"{VCONF}/nvidia.yaml", "    - vendor", "    - vendor:hygon",
     "plugin-unknown-vendor"),
    ("vllm", f"{VCONF}/nvidia.yaml", " - cuda", " - nvidia", "plugin-unknown-vendor"),
    ("vllm", f"{VCONF}/nvidia.yaml", "flagos_blacklist:", "flaggems_blacklist:",
     "plugin-unknown-key"),
    ("vllm", f"{VCONF}/nvidia.yaml", "prefer: flagos", "prefer: flaggems", "plugin-prefer"),
    ("sglang", f"{SCONF}/nvidia.yaml", "prefer: flagos", "prefer: gems", "plugin-prefer"),
    ("vllm", f"{VCONF}/metax.yaml", "  rms_norm: [flagos, reference]",
     "  silu_and_mul: [flagos, reference]", "plugin-duplicate-op"),
    ("vllm", f"{VCONF}/nvidia.yaml", "strict: false", "prefer: vendor", "plugin-duplicate-key"),
    ("vllm", f"{VCONF}/metax.yaml", "  topk_softmax: [flagos, reference]",
     "  topk_softmx: [flagos, reference]", "plugin-unknown-op"),
    ("vllm", f"{VCONF}/nvidia.yaml", "strict: false", 'strict: "false"', "plugin-strict"),
    ("vllm", f"{VCONF}/metax.yaml", "  topk_softmax: [flagos, reference]",
     "  topk_softmax: {flagos: 1}", "plugin-list-type"),
    ("sglang", f"{SCONF}/nvidia.yaml", "prefer: flagos", "- prefer: flagos", "plugin-config-type"),
    ("sglang", f"{SCONF}/tsingmicro.yaml", "    - vendor", "    - vendor:mthreads",
     "plugin-unknown-vendor"),
    # vLLM splits "a|b" into tokens (nvidia.yaml's rotary_embedding passes); SGLang does not
    ("sglang", f"{SCONF}/tsingmicro.yaml", "  RMSNorm: [vendor, flagos]",
     '  RMSNorm: "vendor|flagos"', "plugin-unknown-token+plugin-no-implementation"),
    # the op's only token names no vendor: it never matches, and nothing else is listed
    ("vllm", f"{VCONF}/metax.yaml", "    - vendor:metax", "    - vendor:maca",
     "plugin-unknown-vendor+plugin-no-implementation"),
    # Megatron: the override is never consulted, or its import fails: the CUDA original runs
    ("megatron", MREG, '    target="megatron.core.tensor_parallel.random._set_cuda_rng_state",',
     '    target="megatron.core.tensor_parallel.random.set_cuda_rng_state",',
     "plugin-target-not-overridable"),
    ("megatron", MREG, '    impl="megatron.plugin.Ascend.fusions.fused_softmax.ScaledSoftmax",',
     '    impl="megatron.plugin.ascend.fusions.fused_softmax.ScaledSoftmax",',
     "plugin-impl-not-found"),
    ("megatron", MREG, '    impl="megatron.plugin.optimizer.clip_grads.get_grad_norm_fp32",',
     '    impl="megatron.plugin.optimizer.clip_grads.get_grad_norm",', "plugin-impl-not-found"),
    ("megatron", MREG, '    vendor="npu",', '    vendor="ascend",', "plugin-unknown-vendor"),
    ("megatron", MREG,
     '    target="megatron.core.dist_checkpointing.strategies.filesystem_async.preload_tensors",',
     '    target="megatron.core.transformer.multi_token_prediction.reduce_loss_in_tracker",',
     "plugin-duplicate-register"),
]


def tree(tmp_path: Path, name: str) -> Path:
    dest = tmp_path / name
    shutil.copytree(RESOURCES / name, dest)
    return dest


def edit(path: Path, old: str, new: str) -> int:
    """Replace the first line equal to `old` by `new`; its 1-based number."""
    lines = path.read_text(encoding="utf-8").split("\n")
    number = lines.index(old)
    lines[number] = new
    path.write_text("\n".join(lines), encoding="utf-8")
    return number + 1


def keyed(findings: list[Finding], severity: str) -> set[tuple[str, int, str]]:
    return {(f.path, f.line, f.rule) for f in findings if f.severity == severity}


@pytest.mark.parametrize("name", sorted(EXPECTED_WARNINGS))
def test_real_extracts_have_no_error_and_their_known_warnings(name: str) -> None:
    findings = check_plugins(["."], base=RESOURCES / name)
    assert keyed(findings, ERROR) == set()
    assert keyed(findings, WARNING) == EXPECTED_WARNINGS[name]


@pytest.mark.parametrize("name, rel, old, new, rule", DEFECTS,
                         ids=[f"{d[4]}-{i}" for i, d in enumerate(DEFECTS)])
def test_one_line_defect_is_one_error_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  name: str, rel: str, old: str, new: str,
                                                  rule: str) -> None:
    root = tree(tmp_path, name)
    line = edit(root / rel, old, new)
    expected = set()
    for one in rule.split("+"):  # an op left without a usable token is also unmatched
        # the op's key is reported; a block list's token is on the line below the key
        below = one == "plugin-no-implementation" and new.startswith("    -")
        expected.add((rel, line - 1 if below else line, one))
    assert cli.main(["--format", "json"], cwd=str(root)) == 1
    doc = json.loads(capsys.readouterr().out)
    errors = [(f["path"], f["line"], f["rule"]) for f in doc["findings"] if f["severity"] == ERROR]
    assert sorted(errors) == sorted(expected)


def test_messages_say_what_happens_at_run_time_and_the_fix(tmp_path: Path) -> None:
    root = tree(tmp_path, "vllm")
    edit(root / f"{VCONF}/metax.yaml", "    - vendor:metax", "    - vendor:cuda")
    (error,) = [f for f in check_plugins(["."], base=root) if f.severity == ERROR]
    assert "No implementation selected for op='attention_backend'" in error.message
    assert "vendor:metax" in error.message  # what would match there


def test_removing_a_registration_flags_the_config_that_needs_it(tmp_path: Path) -> None:
    """A vendor's register_ops.py is a fact input: passing it re-checks its package's configs."""
    root = tree(tmp_path, "vllm")
    register = root / "vllm_fl/dispatch/backends/vendor/metax/register_ops.py"
    text = register.read_text(encoding="utf-8")
    register.write_text(text.replace('op_name="attention_backend"', 'op_name="attention"'))
    findings = check_plugins([register.relative_to(root).as_posix()], base=root)
    assert keyed(findings, ERROR) == {(f"{VCONF}/metax.yaml", 5, "plugin-no-implementation")}


def test_a_config_file_alone_is_checked_with_its_package_facts(tmp_path: Path) -> None:
    root = tree(tmp_path, "vllm")
    findings = check_plugins([f"{VCONF}/musa.yaml"], base=root)
    assert keyed(findings, WARNING) == {(f"{VCONF}/musa.yaml", 0, "plugin-config-unreachable")}
    assert "rename it to mthreads.yaml" in findings[0].message


def test_dynamic_register_argument_is_a_warning(tmp_path: Path) -> None:
    root = tree(tmp_path, "megatron")
    edit(root / MREG, '    vendor="npu",', "    vendor=VENDOR,")
    findings = check_plugins(["."], base=root)
    assert keyed(findings, ERROR) == set()
    assert {f.rule for f in findings} == {"plugin-register-dynamic"}


def test_broken_register_ops_is_a_syntax_error(tmp_path: Path) -> None:
    root = tree(tmp_path, "sglang")
    path = root / "sglang_fl/dispatch/backends/vendor/cuda/register_ops.py"
    edit(path, "    impls = [", "    impls = [[")
    assert any(f.rule == "plugin-source-syntax" and f.severity == ERROR
               for f in check_plugins(["."], base=root))


def test_alias_bombs_and_deep_nesting_are_refused_not_expanded(tmp_path: Path) -> None:
    root = tree(tmp_path, "sglang")
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    (root / f"{SCONF}/nvidia.yaml").write_text(bomb)
    (root / f"{SCONF}/tsingmicro.yaml").write_text("[" * 100_000)
    rules = {(f.path, f.rule) for f in check_plugins(["."], base=root)}
    assert {(f"{SCONF}/nvidia.yaml", "plugin-yaml-syntax"),
            (f"{SCONF}/tsingmicro.yaml", "plugin-yaml-syntax")} <= rules


def test_unrelated_file_is_nothing_checked_and_missing_path_is_usage(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tree(tmp_path, "sglang")
    (root / "README.md").write_text("x\n")
    assert cli.main(["README.md", "--no-strict"], cwd=str(root)) == 0
    assert "[nothing-checked]" in capsys.readouterr().out
    assert cli.main(["README.md", "--strict"], cwd=str(root)) == 1
    assert cli.main(["nope.yaml"], cwd=str(root)) == 2
    assert "no such file" in capsys.readouterr().err


def test_since_reports_only_new_findings(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("plugins-since")
    shutil.copytree(RESOURCES / "vllm", repo.path, dirs_exist_ok=True)
    edit(repo.path / f"{VCONF}/nvidia.yaml", "strict: false", 'strict: "false"')  # old defect
    base = repo.commit("base")
    line = edit(repo.path / f"{VCONF}/metax.yaml", "    - vendor:metax", "    - vendor:cuda")
    repo.commit("route attention to cuda")
    before = repo.snapshot()
    assert cli.main(["--since", base, "--format", "json"], cwd=str(repo.path)) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [(f["path"], f["line"], f["rule"]) for f in doc["findings"] if f["new"]] == \
        [(f"{VCONF}/metax.yaml", line - 1, "plugin-no-implementation")]  # at the op's key
    assert doc["inherited"] == 5  # the strict error and the four known warnings
    assert cli.main(["--since", "HEAD"], cwd=str(repo.path)) == 0
    assert repo.snapshot() == before  # the user's HEAD, index, files and worktrees untouched
    assert cli.main(["--since", "no-such-ref"], cwd=str(repo.path)) == 2


def test_every_rule_is_documented_with_its_severity() -> None:
    from flagbot.hooks.plugins.rules import RULES

    docs = (Path(__file__).resolve().parents[2] / "docs" / "hooks.md").read_text(encoding="utf-8")
    table = docs.split("## `check-plugins`", 1)[1]
    for rule, (severity, _) in RULES.items():
        assert f"| `{rule}` | {severity} |" in table, rule


def test_old_findings_stay_inherited_when_the_facts_grow(make_repo: MakeRepo,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A new platform and vendor elsewhere must not make musa.yaml's old warning look new."""
    repo = make_repo("plugins-facts")
    shutil.copytree(RESOURCES / "vllm", repo.path, dirs_exist_ok=True)
    base = repo.commit("base")
    utils = repo.path / "vllm_fl/utils.py"
    utils.write_text(utils.read_text().replace(
        '    "kunlunxin":', '    "hygon": {"device_type": "cuda", "device_name": "cuda"},\n    "kunlunxin":'))
    register = repo.path / "vllm_fl/dispatch/backends/vendor/musa/register_ops.py"
    hygon = repo.path / "vllm_fl/dispatch/backends/vendor/hygon/register_ops.py"
    hygon.parent.mkdir()
    hygon.write_text(register.read_text().replace("musa", "hygon"))
    repo.commit("add hygon")
    assert cli.main(["--since", base, "--format", "json"], cwd=str(repo.path)) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [f for f in doc["findings"] if f["new"]] == [] and doc["inherited"] == 4


def test_files_over_the_size_limit_are_not_read(tmp_path: Path) -> None:
    root = tree(tmp_path, "megatron")
    big = "# " + "x" * (1024 * 1024) + "\n"
    (root / "megatron/core/huge.py").write_text("@overridable\ndef f():\n    pass\n" + big)
    assert check_plugins(["."], base=root) == []  # skipped by the @overridable scan
    (root / MREG).write_text((root / MREG).read_text() + big)
    (finding,) = check_plugins(["."], base=root)
    assert (finding.path, finding.rule, finding.severity) == (MREG, "plugin-file-too-large", ERROR)
