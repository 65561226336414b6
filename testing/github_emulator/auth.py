"""The App's identity: an RSA key per emulator, JWT verification, installation tokens."""

from __future__ import annotations

import secrets
import threading
import time

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

TOKEN_TTL = 3600  # GitHub: "The installation access token will expire after 1 hour"
MAX_JWT_LIFETIME = 600  # GitHub: exp no more than 10 minutes into the future
CLOCK_SKEW = 60


def new_private_key_pem() -> str:
    """A fresh 2048-bit RSA key in PEM, like the one GitHub lets an App owner download."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()


class AppAuth:
    """Holds the App key and the live installation tokens; thread-safe."""

    def __init__(self, app_id: str, private_key_pem: str | None = None) -> None:
        self.app_id = app_id
        self.private_key_pem = private_key_pem or new_private_key_pem()
        key = serialization.load_pem_private_key(self.private_key_pem.encode(), password=None)
        if not isinstance(key, rsa.RSAPrivateKey):
            raise ValueError("emulator: the App key must be an RSA private key (GitHub signs App JWTs with RS256)")
        self._public_key = key.public_key()
        self._tokens: dict[str, float] = {}  # token -> expiry epoch
        self._lock = threading.Lock()
        self.last_jwt_error = ""

    def verify_jwt(self, token: str) -> bool:
        """True for an RS256 JWT signed by the App key with iss=app_id and a valid, short exp."""
        try:
            claims = jwt.decode(
                token,
                self._public_key,
                algorithms=["RS256"],
                options={"require": ["exp", "iat", "iss"], "verify_iss": False},
                leeway=CLOCK_SKEW,
            )
        except jwt.PyJWTError as exc:
            self.last_jwt_error = f"{type(exc).__name__}: {exc}"
            return False
        if str(claims["iss"]) != self.app_id:
            self.last_jwt_error = f"iss {claims['iss']!r} is not the App id {self.app_id}"
            return False
        if int(claims["exp"]) > time.time() + MAX_JWT_LIFETIME + CLOCK_SKEW:
            self.last_jwt_error = "exp is too far in the future (more than 10 minutes)"
            return False
        return True

    def issue_token(self) -> tuple[str, float]:
        """A fresh installation token and its expiry epoch."""
        token = "ghs_" + secrets.token_urlsafe(27)[:36]
        expires = time.time() + TOKEN_TTL
        with self._lock:
            self._tokens[token] = expires
        return token, expires

    def issued_tokens(self) -> list[str]:
        """Every installation token issued so far (tests look for them where they must not be)."""
        with self._lock:
            return list(self._tokens)

    def expire_tokens(self) -> None:
        """Make every issued token expire now (tests of token refresh)."""
        with self._lock:
            for token in self._tokens:
                self._tokens[token] = 0.0

    def classify(self, header: str) -> str:
        """'app' for a valid App JWT, 'installation' for a live token, '' otherwise."""
        scheme, _, value = header.strip().partition(" ")
        if scheme.lower() not in ("token", "bearer") or not value:
            return ""
        value = value.strip()
        with self._lock:
            expiry = self._tokens.get(value)
        if expiry is not None:
            return "installation" if expiry > time.time() else ""
        if value.count(".") == 2 and self.verify_jwt(value):
            return "app"
        return ""
