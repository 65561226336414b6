"""flagbot.bot.signature: GitHub's documented test vector, rejections, rotation."""

from __future__ import annotations

import pytest

from flagbot.bot.signature import sign, verify

# docs.github.com "Validating webhook deliveries": secret, payload, expected header
VECTOR = ("It's a Secret to Everybody", b"Hello, World!",
          "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17")


def test_sign_matches_githubs_documented_test_vector() -> None:
    secret, body, expected = VECTOR
    assert sign(body, secret) == expected


def test_verify_accepts_the_test_vector() -> None:
    secret, body, expected = VECTOR
    assert verify(body, expected, [secret])


@pytest.mark.parametrize("header", [
    None, "", "sha256=", VECTOR[2].replace("sha256=", "sha1="), VECTOR[2][:-1] + "0",
    VECTOR[2].removeprefix("sha256="), VECTOR[2].upper(),
], ids=["missing", "empty", "no-digest", "sha1-prefix", "one-digit-off", "no-prefix", "upper"])
def test_verify_rejects_malformed_or_wrong_headers(header: str | None) -> None:
    assert not verify(VECTOR[1], header, [VECTOR[0]])


def test_verify_rejects_a_changed_body_and_a_wrong_secret() -> None:
    secret, body, header = VECTOR
    assert not verify(body + b" ", header, [secret])
    assert not verify(body, header, ["another secret"])


def test_verify_accepts_either_secret_during_rotation() -> None:
    body = b'{"zen": "x"}'
    assert verify(body, sign(body, "old"), ["new", "old"])
    assert verify(body, sign(body, "new"), ["new", "old"])
    assert not verify(body, sign(body, "older"), ["new", "old"])


def test_verify_with_no_secrets_accepts_nothing() -> None:
    assert not verify(b"x", sign(b"x", ""), [])
