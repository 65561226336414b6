"""`.patch.encrypted` in FlagScale's scheme: verified with a key, listed without one."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from flagbot.hooks import check_patches, cli
from flagbot.hooks.findings import ERROR, Finding
from flagbot.hooks.patches.perfile_crypto import (
    DecryptError,
    decrypt,
    encrypt,
    load_private_key,
    load_public_key,
)
from tests.hooks import perfile_repo as pr
from tests.hooks.conftest import MakeRepo, Repo
from tests.hooks.test_perfile_verify import change_context

FOLDER = f"{pr.HW}/Tsing_micro/FlagScale"
SECRET = f"{FOLDER}/flagscale/train/arguments.py.patch.encrypted"


def write_keys(folder: Path) -> Path:
    """A fresh key pair saved as FlagScale's tools save theirs (PEM, no passphrase)."""
    folder.mkdir()
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (folder / "private_key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption()))
    (folder / "public_key.pem").write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return folder


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_keys(tmp_path_factory.mktemp("keys") / "vendor")


@pytest.fixture(scope="module")
def secret_repo(make_repo: MakeRepo, keys: Path) -> Repo:
    """The real Cambricon patch stored encrypted under the test key, in a second folder."""
    built = pr.build(make_repo, "encrypted")
    plain = (built.path / pr.ARGS_PATCH).read_bytes()
    built.repo.write(SECRET, encrypt(plain, load_public_key(keys)))
    built.repo.write(f"{FOLDER}/diff.yaml", f"commit: {built.base_a}\ndevice_type: Tsing_micro\n")
    built.repo.commit("encrypted folder")
    return built.repo


def errors(found: list[Finding]) -> list[Finding]:
    return [f for f in found if f.severity == ERROR]


def test_round_trip_of_the_scheme(keys: Path) -> None:
    data = b"diff --git a/x b/x\n" * 7
    blob = encrypt(data, load_public_key(keys))
    assert len(blob) == 16 + 256 + 16 * (len(data) // 16 + 1)
    assert decrypt(blob, load_private_key(keys)) == data
    # The scheme (FlagScale's) carries no MAC: a changed last block is caught only by its
    # padding, which random bytes pass 1 time in 256. A changed wrapped key fails OAEP and a
    # cut file its block count, always.
    with pytest.raises(DecryptError):
        decrypt(blob[:16] + bytes([blob[16] ^ 1]) + blob[17:], load_private_key(keys))
    with pytest.raises(DecryptError):
        decrypt(blob[:-5], load_private_key(keys))


def test_encrypted_patches_are_verified_with_the_key(secret_repo: Repo, keys: Path) -> None:
    without = check_patches.check_patches(secret_repo.path, [], hardwares=pr.HW)
    assert errors(without) == []
    assert any(f.path == f"{FOLDER}/diff.yaml" and f.rule == "perfile-encrypted" for f in without)
    opts = check_patches.Options(key_path=keys)
    found = check_patches.check_patches(secret_repo.path, [f"{FOLDER}/diff.yaml"],
                                        hardwares=pr.HW, options=opts)
    assert found == []


def test_a_broken_encrypted_patch_is_an_error_naming_it(secret_repo: Repo, keys: Path,
                                                        tmp_path: Path) -> None:
    repo = secret_repo.copy(tmp_path / "broken")
    plain = change_context((repo.path / pr.ARGS_PATCH).read_bytes())
    repo.write(SECRET, encrypt(plain, load_public_key(keys)))
    found = check_patches.check_patches(repo.path, [SECRET], hardwares=pr.HW,
                                        options=check_patches.Options(key_path=keys))
    assert [(f.path, f.rule) for f in errors(found)] == [(SECRET, "perfile-apply")]


def test_another_vendors_key_cannot_read_real_files(make_repo: MakeRepo, keys: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    repo = pr.build(make_repo, "kunlun").repo
    rc = cli.main(["-C", str(repo.path), "verify", "--key-path", str(keys)])
    out = capsys.readouterr().out
    assert rc == 1
    assert out.count("[perfile-encrypted] cannot decrypt") == 2
    assert f"{pr.KUNLUNXIN}/examples/qwen3/conf/serve.yaml.patch.encrypted" in out


def test_to_perfile_can_store_encrypted_files_that_verify_with_the_key(
        make_repo: MakeRepo, keys: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from flagbot.hooks.patches import perfile
    from flagbot.hooks.patches.perfile_migrate import to_seed

    built = pr.build(make_repo, "encrypt-out")
    [(seed_rel, data)] = to_seed(built.path, perfile.scan_folder(built.path, pr.CAMBRICON),
                                 pr.HW).targets.items()
    seed_rel = seed_rel.replace("Cambricon_MLU", "Enflame_S60")
    built.repo.write(seed_rel, data)
    assert cli.main(["-C", str(built.path), "migrate", "--to-perfile", seed_rel,
                     "--encrypt-key", str(keys)]) == 0
    folder = f"{pr.HW}/Enflame_S60/FlagScale"
    assert (built.path / folder / "flagscale/train/arguments.py.patch.encrypted").is_file()
    assert not (built.path / folder / "flagscale/train/arguments.py.patch").exists()
    capsys.readouterr()
    assert cli.main(["-C", str(built.path), "verify", f"{folder}/diff.yaml",
                     "--key-path", str(keys)]) == 0
    assert "0 error(s), 0 warning(s)" in capsys.readouterr().out
