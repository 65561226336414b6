"""FlagScale's encrypted patch files (`.patch.encrypted`), read and written in memory.

The scheme of FlagScale's own tools: a fresh 32-byte AES key and 16-byte IV per file, the patch
PKCS#7-padded and AES-256-CBC encrypted, the AES key wrapped with RSA-OAEP (MGF1-SHA256,
SHA-256) under the vendor's public key. File bytes: IV (16) + wrapped key (key size / 8; 512
for the 4096-bit pair FlagScale generates) + ciphertext. `--key-path` names the folder holding
`private_key.pem` (FlagScale's convention) or the PEM file itself.

Needs the `cryptography` package (`pip install 'flagbot[flagscale]'`), imported only here and
only when a key is given, so verifying without a key needs nothing extra.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from flagbot.hooks.errors import UsageError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey, RSAPublicKey

PRIVATE_NAME = "private_key.pem"
PUBLIC_NAME = "public_key.pem"
IV_BYTES = 16
MAX_KEY_BYTES = 64 * 1024


class DecryptError(Exception):
    """The file is not readable with this key (wrong key, cut or not this scheme)."""


def _crypto() -> None:
    try:
        import cryptography  # noqa: F401
    except ImportError as exc:
        raise UsageError("reading .patch.encrypted files needs the 'cryptography' package",
                         hint="pip install 'flagbot[flagscale]'") from exc


def load_private_key(key_path: Path) -> RSAPrivateKey:
    """The RSA private key at `key_path` (a PEM file, or a folder holding private_key.pem)."""
    _crypto()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

    path = key_path / PRIVATE_NAME if key_path.is_dir() else key_path
    try:
        with open(path, "rb") as fh:
            pem = fh.read(MAX_KEY_BYTES)
        key = serialization.load_pem_private_key(pem, password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise UsageError(f"--key-path {key_path}: cannot load an RSA private key from {path}: "
                         f"{exc}", hint="pass the folder holding private_key.pem (as for "
                                        "FlagScale's unpatch.py) or the PEM file") from exc
    if not isinstance(key, RSAPrivateKey):
        raise UsageError(f"--key-path {key_path}: {path} is not an RSA private key")
    return key


def _oaep() -> object:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    return padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(),
                        label=None)


def decrypt(data: bytes, key: RSAPrivateKey) -> bytes:
    """The plain patch inside an encrypted file; DecryptError when this key cannot read it."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    wrapped_len = key.key_size // 8
    body = data[IV_BYTES + wrapped_len:]
    if len(body) < 16 or len(body) % 16:
        raise DecryptError(f"{len(data)} bytes is not IV (16) + wrapped key ({wrapped_len}) + "
                           "whole AES blocks: cut, or made for another key size")
    try:
        aes_key = key.decrypt(data[IV_BYTES:IV_BYTES + wrapped_len], _oaep())  # type: ignore[arg-type]
    except ValueError as exc:
        raise DecryptError("the AES key does not unwrap with this private key (another "
                           "vendor's key, or the file was changed)") from exc
    if len(aes_key) != 32:
        raise DecryptError(f"the unwrapped key has {len(aes_key)} bytes, not AES-256's 32")
    dec = Cipher(algorithms.AES(aes_key), modes.CBC(data[:IV_BYTES])).decryptor()
    padded = dec.update(body) + dec.finalize()
    pad = padded[-1]
    if not 1 <= pad <= 16 or padded[-pad:] != bytes([pad]) * pad:
        raise DecryptError("bad padding after decryption: the file was changed or cut")
    return padded[:-pad]


def load_public_key(key_path: Path) -> RSAPublicKey:
    """The RSA public key at `key_path` (a PEM file, or a folder holding public_key.pem)."""
    _crypto()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

    path = key_path / PUBLIC_NAME if key_path.is_dir() else key_path
    try:
        with open(path, "rb") as fh:
            key = serialization.load_pem_public_key(fh.read(MAX_KEY_BYTES))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot load an RSA public key: {exc}") from exc
    if not isinstance(key, RSAPublicKey):
        raise UsageError(f"{path} is not an RSA public key")
    return key


def encrypt(data: bytes, key: RSAPublicKey) -> bytes:
    """`data` in FlagScale's encrypted form under `key` (fresh AES key and IV each call)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    aes_key, iv = os.urandom(32), os.urandom(IV_BYTES)
    pad = 16 - len(data) % 16
    enc = Cipher(algorithms.AES(aes_key), modes.CBC(iv)).encryptor()
    body = enc.update(data + bytes([pad]) * pad) + enc.finalize()
    return iv + key.encrypt(aes_key, _oaep()) + body  # type: ignore[arg-type]
