"""AWS Signature Version 4, verified on a request as its client signed it.

An SQS client (boto3, the AWS CLI, the AWS SDKs, kombu) signs a canonical
form of each request, the method, path, query, the headers it names and a
hash of the body, with a key derived from its secret, the day, the region
and the service. We check that for real (ElasticMQ, LocalStack and moto
accept anything): rebuild the canonical request from the bytes that arrived,
derive the key from the secret we hold for the access key id, and compare in
constant time. So the path, query and headers are taken raw, as the client
saw them (a proxy in front must pass Host on unchanged), never as a web
framework has decoded or merged them.

Pure: a SignedRequest in, the access key id out, or a SignatureError naming
SQS's error code. Where the secrets live is the caller's business.
"""

import hashlib
import hmac
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, unquote

ALGORITHM = "AWS4-HMAC-SHA256"
SERVICE = "sqs"
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
MAX_SKEW = timedelta(minutes=5)
MAX_EXPIRES_S = 7 * 24 * 3600  # a presigned request's longest life (AWS's limit)
AMZ_DATE = "%Y%m%dT%H%M%SZ"
_AMZ_DATE = re.compile(r"\d{8}T\d{6}Z")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_SPACES = re.compile(r"\s+")
_PRESIGNED = (
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "X-Amz-Expires",
    "X-Amz-SignedHeaders",
    "X-Amz-Signature",
)
_AUTHORIZATION = re.compile(
    rf"{ALGORITHM}\s+Credential=(?P<credential>[^,\s]+),\s*"
    r"SignedHeaders=(?P<signed>[^,\s]+),\s*Signature=(?P<signature>[0-9a-f]{64})"
)


class SignatureError(Exception):
    """A request refused: SQS's error code, its message and HTTP status."""

    def __init__(self, code: str, message: str, status: int = 403) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


@dataclass(frozen=True, slots=True)
class SignedRequest:
    """A request as it arrived: its path and query still percent-encoded,
    its headers in order, names in any case, repeats kept."""

    method: str
    path: str
    query: str
    headers: Sequence[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        """All values of header ``name`` joined as SigV4 joins them, or None."""
        values = [v for n, v in self.headers if n.lower() == name]
        return ",".join(_SPACES.sub(" ", v.strip()) for v in values) if values else None

    def params(self) -> list[tuple[str, str]]:
        """The query's parameters, decoded, in order."""
        pairs = []
        for part in self.query.split("&"):
            if part:
                name, _, value = part.partition("=")
                pairs.append((unquote(name), unquote(value)))
        return pairs


@dataclass(frozen=True, slots=True)
class Credential:
    """``<access key id>/<yyyymmdd>/<region>/<service>/aws4_request``."""

    access_key_id: str
    day: str
    region: str
    service: str

    @classmethod
    def parse(cls, text: str) -> "Credential":
        parts = text.split("/")
        if len(parts) != 5 or parts[4] != "aws4_request" or not all(parts):
            raise SignatureError(
                "IncompleteSignature",
                f"Credential {text!r} is not <key id>/<date>/<region>/<service>/aws4_request.",
                400,
            )
        return cls(*parts[:4])

    @property
    def scope(self) -> str:
        return f"{self.day}/{self.region}/{self.service}/aws4_request"


@dataclass(frozen=True, slots=True)
class Signature:
    """What the client claims: who signed, when, over which headers, and how."""

    credential: Credential
    amz_date: str
    signed_headers: tuple[str, ...]
    signature: str
    expires_s: int | None  # a presigned request's life; None when signed in a header
    payload_hash: str

    @classmethod
    def of(cls, request: SignedRequest) -> "Signature":
        """From the Authorization header, or from the query (presigned).
        MissingClientTokenId when neither is there."""
        if (authorization := request.header("authorization")) is not None:
            return cls._from_header(request, authorization)
        params = dict(request.params())
        if "X-Amz-Signature" in params or "X-Amz-Credential" in params:
            return cls._from_query(request, params)
        raise SignatureError(
            "MissingClientTokenId", "Request must contain AWSAccessKeyId or X.509 certificate."
        )

    @classmethod
    def _from_header(cls, request: SignedRequest, authorization: str) -> "Signature":
        found = _AUTHORIZATION.fullmatch(authorization.strip())
        if found is None:
            raise SignatureError(
                "IncompleteSignature",
                f"Authorization header requires {ALGORITHM} with Credential, SignedHeaders "
                "and Signature.",
                400,
            )
        return cls(
            credential=Credential.parse(found["credential"]),
            amz_date=request.header("x-amz-date") or "",
            signed_headers=tuple(found["signed"].split(";")),
            signature=found["signature"],
            expires_s=None,
            payload_hash=_payload_hash(request),
        )

    @classmethod
    def _from_query(cls, request: SignedRequest, params: dict[str, str]) -> "Signature":
        missing = [name for name in _PRESIGNED if not params.get(name)]
        if missing or params["X-Amz-Algorithm"] != ALGORITHM:
            raise SignatureError(
                "IncompleteSignature",
                f"a presigned request needs {ALGORITHM} and {', '.join(missing) or 'more'}.",
                400,
            )
        try:
            expires_s = int(params["X-Amz-Expires"])
        except ValueError:
            expires_s = -1
        if not 0 < expires_s <= MAX_EXPIRES_S:
            raise SignatureError(
                "IncompleteSignature",
                f"X-Amz-Expires must be 1 to {MAX_EXPIRES_S} seconds.",
                400,
            )
        return cls(
            credential=Credential.parse(params["X-Amz-Credential"]),
            amz_date=params["X-Amz-Date"],
            signed_headers=tuple(params["X-Amz-SignedHeaders"].split(";")),
            signature=params["X-Amz-Signature"],
            expires_s=expires_s,
            payload_hash=_payload_hash(request),
        )


def _payload_hash(request: SignedRequest) -> str:
    """What the client says it signed as the body: x-amz-content-sha256 (a
    hash, or UNSIGNED-PAYLOAD), else the body's hash, which every SDK signs
    for SQS, presigned requests included (only S3 presigns unsigned)."""
    claimed = request.header("x-amz-content-sha256")
    if claimed is None:
        return hashlib.sha256(request.body).hexdigest()
    if claimed != UNSIGNED_PAYLOAD and _HEX64.fullmatch(claimed) is None:
        raise SignatureError(
            "IncompleteSignature", f"x-amz-content-sha256 {claimed[:80]!r} is no hash.", 400
        )
    return claimed


def verify(
    request: SignedRequest,
    secret_of: Callable[[str], str | None],
    now: datetime,
    region: str | None = None,
) -> str:
    """The access key id that signed ``request``, or SignatureError.

    ``secret_of``: the secret of an access key id, None for one unknown (or
    revoked). ``region``: the only one accepted in the credential's scope,
    when set; any otherwise (clients are configured with all sorts)."""
    signature = Signature.of(request)
    _check_scope(signature, region)
    _check_time(signature, now)
    if request.header("x-amz-security-token") is not None or any(
        name == "X-Amz-Security-Token" for name, _ in request.params()
    ):
        raise _invalid_token()  # we issue no temporary credentials
    secret = secret_of(signature.credential.access_key_id)
    if secret is None:
        raise _invalid_token()
    _check_payload(request, signature)
    expected = sign(secret, signature.credential, signature.amz_date, canonical(request, signature))
    if not hmac.compare_digest(expected, signature.signature):
        raise SignatureError(
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided. "
            "Check your AWS Secret Access Key and signing method. Consult the service "
            "documentation for details.",
        )
    return signature.credential.access_key_id


def canonical(request: SignedRequest, signature: Signature) -> str:
    """The canonical request, as SigV4 defines it for every service but S3."""
    headers = []
    for name in signature.signed_headers:
        value = request.header(name)
        if value is None:
            raise SignatureError(
                "SignatureDoesNotMatch", f"header {name!r} is signed but not sent."
            )
        headers.append(f"{name}:{value}\n")
    return "\n".join(
        (
            request.method,
            _canonical_path(request.path),
            _canonical_query(request.params()),
            "".join(headers),
            ";".join(signature.signed_headers),
            signature.payload_hash,
        )
    )


def sign(secret: str, credential: Credential, amz_date: str, canonical_request: str) -> str:
    """The hex signature of a canonical request."""
    digest = hashlib.sha256(canonical_request.encode()).hexdigest()
    to_sign = f"{ALGORITHM}\n{amz_date}\n{credential.scope}\n{digest}"
    key = f"AWS4{secret}".encode()
    for part in (credential.day, credential.region, credential.service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def _canonical_path(raw: str) -> str:
    """The path as sent, dot segments removed, then encoded once more: what
    every SDK signs for services other than S3."""
    path = posixpath.normpath(raw) if raw not in ("", "/") else "/"
    if raw.endswith("/") and not path.endswith("/"):
        path += "/"
    path = "/" + path.lstrip("/")  # normpath keeps a leading "//"
    return quote(path, safe="/~")


def _canonical_query(params: list[tuple[str, str]]) -> str:
    encoded = sorted(
        (quote(name, safe="-_.~"), quote(value, safe="-_.~"))
        for name, value in params
        if name != "X-Amz-Signature"
    )
    return "&".join(f"{name}={value}" for name, value in encoded)


def _check_scope(signature: Signature, region: str | None) -> None:
    credential, signed = signature.credential, signature.signed_headers
    if credential.service != SERVICE:
        raise SignatureError(
            "SignatureDoesNotMatch",
            f"Credential should be scoped to correct service: '{SERVICE}'.",
        )
    if region is not None and credential.region != region:
        raise SignatureError(
            "SignatureDoesNotMatch",
            f"Credential should be scoped to a valid region, not '{credential.region}'; "
            f"this endpoint serves '{region}'.",
        )
    if "host" not in signed or list(signed) != sorted(signed):
        raise SignatureError(
            "SignatureDoesNotMatch",
            "SignedHeaders must be lowercase, in order, and include host.",
        )


def _check_time(signature: Signature, now: datetime) -> None:
    """Within 5 minutes of our clock (a replay window no wider), and, for a
    presigned request, not past its expiry."""
    amz_date = signature.amz_date
    if _AMZ_DATE.fullmatch(amz_date) is None:
        raise SignatureError(
            "IncompleteSignature", "X-Amz-Date must be given as yyyyMMddTHHmmssZ.", 400
        )
    if amz_date[:8] != signature.credential.day:
        raise SignatureError(
            "SignatureDoesNotMatch",
            f"Credential date {signature.credential.day} is not X-Amz-Date's day ({amz_date}).",
        )
    signed_at = datetime.strptime(amz_date, AMZ_DATE).replace(tzinfo=UTC)
    latest = signed_at + timedelta(seconds=signature.expires_s) if signature.expires_s else None
    if signed_at - now > MAX_SKEW:
        raise SignatureError(
            "SignatureDoesNotMatch",
            f"Signature not yet current: {amz_date} is still later than "
            f"{(now + MAX_SKEW).strftime(AMZ_DATE)} ({now.strftime(AMZ_DATE)} + 5 min.)",
        )
    if latest is None and now - signed_at > MAX_SKEW:
        raise SignatureError(
            "SignatureDoesNotMatch",
            f"Signature expired: {amz_date} is now earlier than "
            f"{(now - MAX_SKEW).strftime(AMZ_DATE)} ({now.strftime(AMZ_DATE)} - 5 min.)",
        )
    if latest is not None and now > latest:
        raise SignatureError(
            "SignatureDoesNotMatch",
            f"Request has expired: it was good until {latest:%Y%m%dT%H%M%SZ}.",
        )


def _check_payload(request: SignedRequest, signature: Signature) -> None:
    """A body hash the client sent must be the body's: it is what was signed."""
    claimed = signature.payload_hash
    if claimed != UNSIGNED_PAYLOAD and claimed != hashlib.sha256(request.body).hexdigest():
        raise SignatureError(
            "SignatureDoesNotMatch",
            "The provided x-amz-content-sha256 header does not match what was computed.",
        )


def _invalid_token() -> SignatureError:
    return SignatureError(
        "InvalidClientTokenId", "The security token included in the request is invalid."
    )
