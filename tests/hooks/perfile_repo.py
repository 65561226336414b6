"""A FlagScale-shaped repository from the real per-file extract (testing/resources/real/).

Each base of the extract becomes a commit; the ids FlagScale recorded for those bases are
replaced in `diff.yaml` by the test repository's, and every id in `patch_history.yaml` by the
last base (the history only has to name commits that exist). Nothing else is changed.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from tests.hooks.conftest import MakeRepo, Repo

EXTRACT = Path(__file__).resolve().parents[2] / "testing/resources/real/flagscale-perfile"
BASE_A = "a9e7999232dc3c2a74793decbf2425098ba72a00"  # Cambricon_MLU, Huawei_Atlas800TA3
BASE_B = "13cc9f5cb8dec63471df2b8ed872703c0f44f127"  # Metax_C550
KUNLUN = "32704acc698b2565cd371365cf4c43549a9fb652"  # encrypted: any commit will do
HW = "hardware"
HUAWEI = f"{HW}/Huawei_Atlas800TA3/FlagScale"
CAMBRICON = f"{HW}/Cambricon_MLU/FlagScale"
METAX = f"{HW}/Metax_C550/FlagScale"
KUNLUNXIN = f"{HW}/Kunlunxin_R310p/FlagScale"
MEGATRON = f"{HW}/NVIDIA_CambriconMLU/Megatron-LM"
ARGS_PATCH = f"{CAMBRICON}/flagscale/train/arguments.py.patch"


@dataclass
class PerfileRepo:
    repo: Repo
    base_a: str
    base_b: str

    @property
    def path(self) -> Path:
        return self.repo.path


def build(make_repo: MakeRepo, name: str = "flagscale") -> PerfileRepo:
    """The extract committed on top of its two bases, ids rewritten to this repository's."""
    repo = make_repo(name)
    shutil.copytree(EXTRACT / "base-a9e79992", repo.path, dirs_exist_ok=True)
    base_a = repo.commit("FlagScale at a9e79992 (the files the patches change)")
    shutil.copytree(EXTRACT / "base-13cc9f5c", repo.path, dirs_exist_ok=True)
    base_b = repo.commit("FlagScale at 13cc9f5c (the files the patches change)")
    shutil.copytree(EXTRACT / HW, repo.path / HW)
    ids = {BASE_A: base_a, BASE_B: base_b, KUNLUN: base_b}
    for meta in (repo.path / HW).glob("*/*/diff.yaml"):
        text = meta.read_text()
        for old, new in ids.items():
            text = text.replace(f"commit: {old}", f"commit: {new}")
        meta.write_text(text)
    history = repo.path / HW / "patch_history.yaml"
    history.write_text(re.sub(r"\b[0-9a-f]{40}\b", base_b, history.read_text()))
    repo.commit("vendor folders, as on FlagScale's main")
    return PerfileRepo(repo, base_a, base_b)
