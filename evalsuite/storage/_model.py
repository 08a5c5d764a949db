"""The store's values: :class:`StoreError`, the dataclasses its methods take and return, workspace
ids, the size caps and the checks every argument passes before a query runs.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import math
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import EvalSuiteError

__all__ = [
    "DATASET_KINDS",
    "DEFAULT_MAX_DATASET_BYTES",
    "DEFAULT_MAX_WORKSPACE_BYTES",
    "DatasetRef",
    "PurgeResult",
    "SavedWorkspace",
    "StoreError",
    "StoreUsage",
    "WORKSPACE_ID_PATTERN",
    "Workspace",
    "WorkspaceSummary",
    "check_workspace_id",
    "new_workspace_id",
]

DATASET_KINDS = ("run", "qrels", "records")

MIB = 1024 * 1024
DEFAULT_MAX_DATASET_BYTES = 50 * MIB
DEFAULT_MAX_WORKSPACE_BYTES = 200 * MIB
# PostgreSQL's bytea and SQLite's default SQLITE_MAX_LENGTH both stop near 1 GB.
HARD_MAX_DATASET_BYTES = 1_000_000_000
MAX_EXPIRY_DAYS = 3650
# A dataset no workspace refers to is kept this long after its last put_dataset, so a session
# that put it and is about to save a workspace referring to it never finds it gone.
DEFAULT_ORPHAN_GRACE_SECONDS = 600.0
MAX_DATASETS_PER_WORKSPACE = 500
MAX_META_BYTES = 64 * 1024
MAX_META_DEPTH = 32  # a view state needs 4
MAX_META_ITEMS = 10_000
MAX_TOKEN_CHARS = 200  # owner tokens are 43 characters
MAX_LISTED_IDS = 1_000  # workspace ids asked about in one list_workspaces call

_ID_RANDOM_BYTES = 24  # 192 bits from secrets.token_bytes: the part nobody can guess
_ID_CHECK_BYTES = 3  # a check on those bits, so a changed or mistyped link is told apart
_ID_LENGTH = 4 * (_ID_RANDOM_BYTES + _ID_CHECK_BYTES) // 3  # 36 base64url characters, no padding
WORKSPACE_ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{%d}" % _ID_LENGTH)
_DIGEST_PATTERN = re.compile(r"[0-9a-f]{64}")
_FORMAT_PATTERN = re.compile(r"[a-z0-9][a-z0-9_.+-]{0,31}")
_SCHEMA_PATTERN = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")
_MAX_NAME_CHARS = 200
# System names come from run tags, which can be long; keep them whole.
_MAX_SYSTEM_CHARS = 2000
_MAX_FILENAME_CHARS = 255


class StoreError(EvalSuiteError):
    """A workspace-store problem, with a message for a person and a ``code`` for a program.

    Attributes
    ----------
    code : str
        One of ``"invalid_argument"`` (a bad argument or setting), ``"malformed_id"`` (not shaped
        like a workspace id), ``"damaged_id"`` (shaped like one but failing its check: a changed or
        mistyped link), ``"unknown_workspace"``, ``"deleted"``, ``"expired"``, ``"wrong_token"``,
        ``"too_large"``, ``"limit_reached"`` (a per-user limit of :mod:`evalsuite.hosting`),
        ``"unknown_dataset"``, ``"missing_dataset"`` (a workspace refers to a
        dataset that is not stored), ``"corrupt"`` (stored bytes do not match their digest, or the
        database itself is damaged: a SQLite file overwritten, cut short or not a SQLite database
        at all) or ``"unavailable"`` (the database cannot be reached or used).
    detail : str or None
        For the operator only: where the store is (a file path, a database URL without its
        password) and what the database said. It is never part of the message, which a visitor
        may see; :func:`server_error` writes it to the log (logger ``evalsuite.storage``).
    """

    def __init__(self, reason: str, *, code: str, detail: str | None = None, **where: Any) -> None:
        self.code = code
        self.detail = detail
        super().__init__(reason, **where)


_LOG = logging.getLogger("evalsuite.storage")


def server_error(reason: str, *, code: str, detail: str) -> StoreError:
    """A StoreError about the server's database: the message says what failed in words a visitor
    may see (no file path, URL or database message); ``detail`` (the store's location and what the
    database said) goes to the operator's log and the error's ``detail`` attribute."""
    _LOG.error("workspace store: %s: %s", reason, detail)
    return StoreError(f"{reason} (the server's log has the details)", code=code, detail=detail)


# ----------------------------------------------------------------------------------------------
# Values.


@dataclass(frozen=True)
class DatasetRef:
    """One dataset of a workspace: which bytes, and how the dashboard reads them.

    Parameters
    ----------
    digest : str
        SHA-256 of the file's bytes, 64 lower-case hex digits, as returned by
        :meth:`Store.put_dataset`.
    kind : {"run", "qrels", "records"}
        What the file is.
    filename : str
        The uploaded file's name (1 to 255 characters, no control characters).
    system : str or None
        The system name shown for a run (or a label for a records file); None for qrels and for
        records files that name their systems in a ``system`` column.
    format : str or None
        The reader format (``"trec"``, ``"jsonl"``, ``"parquet"`` ...; one of
        :data:`evalsuite.io.FORMATS` for runs and qrels) or None (``""`` too) to detect it again.

    Raises
    ------
    StoreError
        ``code="invalid_argument"`` when a field is not of that form.
    """

    digest: str
    kind: str
    filename: str
    system: str | None = None
    format: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "digest", _check_digest(self.digest))
        object.__setattr__(self, "kind", _check_kind(self.kind))
        object.__setattr__(self, "filename", _check_text(self.filename, "filename", _MAX_FILENAME_CHARS))
        if self.system is not None:
            object.__setattr__(self, "system", _check_text(self.system, "system", _MAX_SYSTEM_CHARS))
        if self.format == "":
            object.__setattr__(self, "format", None)
        if self.format is not None and (
            not isinstance(self.format, str) or not _FORMAT_PATTERN.fullmatch(self.format)
        ):
            raise StoreError(
                "a format is a short lower-case name such as 'trec', 'jsonl' or 'parquet', or None",
                code="invalid_argument", field="format", value=self.format)


@dataclass(frozen=True)
class Workspace:
    """A saved workspace as :meth:`Store.load_workspace` returns it.

    Attributes
    ----------
    workspace_id : str
        The 36-character id in its share links.
    name : str
        The name its owner gave it.
    datasets : tuple of DatasetRef
        Its datasets in the order they were saved.
    total_bytes : int
        Bytes of its distinct datasets together.
    created_at : datetime
        When it was saved (UTC).
    expires_at : datetime or None
        When it stops opening (UTC), or None to keep it until its owner deletes it.
    meta : dict
        The JSON metadata saved with it (empty by default).
    evalsuite_version : str
        The EvalSuite version that saved it.
    owner_id : str or None
        The signed-in user who saved it (None when sign-in was off).
    """

    workspace_id: str
    name: str
    datasets: tuple[DatasetRef, ...]
    total_bytes: int
    created_at: datetime
    expires_at: datetime | None
    meta: dict = field(default_factory=dict)
    evalsuite_version: str = ""
    owner_id: str | None = None


@dataclass(frozen=True)
class SavedWorkspace:
    """What :meth:`Store.save_workspace` returns.

    Attributes
    ----------
    workspace_id : str
        Goes in the share link.
    owner_token : str
        Needed to delete the workspace. Shown once, kept by the creator (the dashboard keeps it in
        the browser session); the store keeps only its SHA-256. Never put it in a share link.
    workspace : Workspace
        The workspace as saved.
    """

    workspace_id: str
    owner_token: str
    workspace: Workspace


@dataclass(frozen=True)
class WorkspaceSummary:
    """One line of :meth:`Store.list_workspaces`: what became of a workspace id.

    Attributes
    ----------
    workspace_id : str
        The id asked about, as given.
    status : {"active", "deleted", "expired", "unknown", "invalid"}
        ``"invalid"`` for a value that is not a well-formed workspace id.
    name : str or None
        Its name while active (a deleted or expired workspace keeps no name).
    n_datasets, total_bytes : int
        Its datasets and their bytes while active, else 0.
    created_at, expires_at, deleted_at : datetime or None
        UTC times known for it.
    """

    workspace_id: str
    status: str
    name: str | None = None
    n_datasets: int = 0
    total_bytes: int = 0
    created_at: datetime | None = None
    expires_at: datetime | None = None
    deleted_at: datetime | None = None


@dataclass(frozen=True)
class StoreUsage:
    """What :meth:`Store.usage` returns: size of the store and its caps (bytes)."""

    backend: str
    location: str
    n_datasets: int
    dataset_bytes: int
    n_active_workspaces: int
    n_gone_workspaces: int
    max_dataset_bytes: int
    max_workspace_bytes: int
    default_expiry_days: float | None


@dataclass(frozen=True)
class PurgeResult:
    """What :meth:`Store.purge_expired` did."""

    expired_workspaces: int
    removed_datasets: int


# ----------------------------------------------------------------------------------------------
# Workspace ids.


def _id_check(body: bytes) -> bytes:
    return hashlib.sha256(b"evalsuite workspace id\x00" + body).digest()[:_ID_CHECK_BYTES]


def new_workspace_id() -> str:
    """A fresh workspace id: 192 random bits from :func:`secrets.token_bytes` and a 24-bit check.

    Returns
    -------
    str
        36 characters of the URL-safe base64 alphabet (``A-Z a-z 0-9 - _``, RFC 4648 section 5),
        no padding, safe in a URL query parameter as it is.
    """
    body = secrets.token_bytes(_ID_RANDOM_BYTES)
    return base64.urlsafe_b64encode(body + _id_check(body)).decode("ascii")


def check_workspace_id(value: Any) -> str:
    """Return ``value`` if it is a well-formed workspace id; raise :class:`StoreError` if not.

    Runs before any query: the pattern is a full match of 36 characters of ``A-Za-z0-9-_``, and
    the last 24 bits must be the check of the first 192.

    Raises
    ------
    StoreError
        ``code="malformed_id"`` when it is not text of that shape (a link cut short, with extra
        characters, or not a workspace link at all); ``code="damaged_id"`` when it has the shape
        but fails its check (a character changed or mistyped).
    """
    if not isinstance(value, str) or not WORKSPACE_ID_PATTERN.fullmatch(value):
        length = f"{len(value)} characters" if isinstance(value, str) else type(value).__name__
        raise StoreError(
            f"this is not a workspace id ({length}); a workspace id is {_ID_LENGTH} characters "
            "of A-Z, a-z, 0-9, '-' and '_'. Copy the whole share link again",
            code="malformed_id", field="workspace_id", value=value)
    raw = base64.urlsafe_b64decode(value.encode("ascii"))
    if not hmac.compare_digest(raw[_ID_RANDOM_BYTES:], _id_check(raw[:_ID_RANDOM_BYTES])):
        raise StoreError(
            "this workspace id fails its check: the link was changed or mistyped. "
            "Copy the whole share link again",
            code="damaged_id", field="workspace_id", value=value)
    return value


# ----------------------------------------------------------------------------------------------
# Argument checks and small helpers.


def _check_digest(value: Any) -> str:
    if isinstance(value, str) and _DIGEST_PATTERN.fullmatch(value.lower()):
        return value.lower()
    raise StoreError("a dataset digest is the SHA-256 of its bytes: 64 hex digits",
                     code="invalid_argument", field="digest", value=value)


def _check_kind(value: Any) -> str:
    if value in DATASET_KINDS and isinstance(value, str):
        return value
    raise StoreError(f"a dataset kind is one of {', '.join(DATASET_KINDS)}",
                     code="invalid_argument", field="kind", value=value)


def _check_text(value: Any, name: str, max_chars: int) -> str:
    if not isinstance(value, str):
        raise StoreError(f"{name} must be text", code="invalid_argument", field=name, value=value)
    # Kept exactly as given (a file named " q.trec " reopens under that name); only a name of
    # nothing but spaces is refused.
    text = value
    if not text.strip():
        raise StoreError(f"{name} is empty", code="invalid_argument", field=name, value=value)
    if len(text) > max_chars:
        raise StoreError(f"{name} is {len(text)} characters long; at most {max_chars} are kept",
                         code="invalid_argument", field=name, value=value)
    if _CONTROL_CHARACTERS.search(text):
        raise StoreError(f"{name} contains a control character (a line break, tab or NUL)",
                         code="invalid_argument", field=name, value=value)
    return text


def _check_count(value: Any, name: str, limit: int = 2**62) -> int:
    """A whole number from 0 to ``limit`` (a count of records, bytes, tokens: what a database
    integer column holds)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
        raise StoreError(f"{name} is a whole number from 0 to {limit:,}", code="invalid_argument", field=name,
                         value=value if isinstance(value, (int, float, str, type(None))) else type(value).__name__)
    return value


def _check_amount(value: Any, name: str, limit: float = 1e15) -> float:
    """A finite number from 0 to ``limit`` (a cost)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 <= value <= limit):
        raise StoreError(f"{name} is a number from 0 to {limit:g}", code="invalid_argument", field=name,
                         value=value if isinstance(value, (float, str, type(None))) else type(value).__name__)
    return float(value)


def _short_text(value: Any, name: str, limit: int = _MAX_NAME_CHARS) -> str:
    """Text kept for the record (a label, a model name, a message), cut to ``limit`` characters."""
    if not isinstance(value, str):
        raise StoreError(f"{name} must be text", code="invalid_argument", field=name, value=type(value).__name__)
    return value[:limit]


_RUN_ID_PATTERN = re.compile(r"[0-9a-f]{24}")


def _check_run_id(value: Any) -> str:
    """A judge run's id, as begin_judge_run returned it (24 hex digits)."""
    if isinstance(value, str) and _RUN_ID_PATTERN.fullmatch(value):
        return value
    raise StoreError("a judge run id is the text begin_judge_run returned (24 hex digits)", code="invalid_argument",
                     field="run_id", value=value if isinstance(value, str) and len(value) < 100 else None)


def _check_token(value: Any) -> str | None:
    """An owner token: text of at most MAX_TOKEN_CHARS characters, or None."""
    if value is None or (isinstance(value, str) and not value):
        return None
    if not isinstance(value, str) or len(value) > MAX_TOKEN_CHARS:
        raise StoreError("the owner token is the text save_workspace returned", code="wrong_token",
                         field="owner_token", value=None)
    return value


def _check_days(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise StoreError(f"{name} is a number of days or None", code="invalid_argument",
                         field=name, value=value)
    if not 0 < value <= MAX_EXPIRY_DAYS:
        raise StoreError(f"{name} must be more than 0 and at most {MAX_EXPIRY_DAYS} days",
                         code="invalid_argument", field=name, value=value)
    return float(value)


def _check_cap(value: Any, name: str, limit: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= limit:
        raise StoreError(f"{name} is a number of bytes above 0 and at most {limit:,}",
                         code="invalid_argument", field=name, value=value)
    return value


def _check_json_value(value: Any, name: str) -> None:
    """Walk a JSON value without recursion: at most MAX_META_DEPTH levels and MAX_META_ITEMS values,
    keys that are text, text of at most MAX_META_BYTES characters in all, finite numbers, integers
    of at most 64 bits. A value past any of these is refused before json.dumps recurses into it."""
    stack = [(value, 1)]
    items = 0
    chars = 0
    while stack:
        item, depth = stack.pop()
        items += 1
        if items > MAX_META_ITEMS:
            raise StoreError(f"{name} holds more than {MAX_META_ITEMS:,} values", code="invalid_argument",
                             field=name, value=None)
        if depth > MAX_META_DEPTH:
            raise StoreError(f"{name} is nested more than {MAX_META_DEPTH} levels deep", code="invalid_argument",
                             field=name, value=None)
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, str):
            chars += len(item)
        elif isinstance(item, int):
            if item.bit_length() > 64:
                raise StoreError(f"{name} holds an integer wider than 64 bits", code="invalid_argument",
                                 field=name, value=None)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise StoreError(f"{name} holds a number that is not finite", code="invalid_argument",
                                 field=name, value=item)
        elif isinstance(item, Mapping):
            for key, inner in item.items():
                if not isinstance(key, str):
                    raise StoreError(f"the keys of {name} are text", code="invalid_argument", field=name,
                                     value=type(key).__name__)
                chars += len(key)
                stack.append((inner, depth + 1))
        elif isinstance(item, (list, tuple)):
            stack.extend((inner, depth + 1) for inner in item)
        else:
            raise StoreError(f"{name} must hold only JSON values (text, numbers, lists, dicts), not "
                             f"{type(item).__name__}", code="invalid_argument", field=name, value=None)
        if chars > MAX_META_BYTES:
            raise StoreError(f"{name} holds more than {_format_size(MAX_META_BYTES)} of text", code="invalid_argument",
                             field=name, value=None)


def _meta_json(meta: Any) -> str:
    if meta is None:
        return "{}"
    if not isinstance(meta, Mapping):
        raise StoreError("meta is a dict of JSON values", code="invalid_argument", field="meta",
                         value=meta)
    _check_json_value(meta, "meta")
    try:
        text = json.dumps(dict(meta), allow_nan=False, ensure_ascii=False, sort_keys=True,
                          separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"meta must hold only JSON values (text, numbers, lists, dicts): {exc}",
                         code="invalid_argument", field="meta", value=meta) from None
    if len(text.encode("utf-8")) > MAX_META_BYTES:
        raise StoreError(f"meta is {_format_size(len(text.encode('utf-8')))} as JSON; at most "
                         f"{_format_size(MAX_META_BYTES)} is kept", code="invalid_argument",
                         field="meta", value=None)
    return text


def _format_size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < MIB:
        return f"{n / 1024:.1f} KiB ({n:,} bytes)"
    return f"{n / MIB:.1f} MiB ({n:,} bytes)"


def _utc(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, tz=timezone.utc)


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _evalsuite_version() -> str:
    from ..version import __version__  # late: the package imports this module's siblings first

    return __version__


def _redact_url(url: str) -> str:
    """The URL without its password (shown as ``***``) or query parameters (which may hold one:
    ``?password=``), for messages and :attr:`Store.location`."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if parts.password is not None:
            host = parts.hostname or ""
            if parts.port is not None:
                host += f":{parts.port}"
            netloc = f"{parts.username or ''}:***@{host}"
    except ValueError:
        return "<unparseable URL>"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
