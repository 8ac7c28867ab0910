"""Where corpus inputs live: local paths, directories, globs and object-store URIs.

Input: what a user names as a corpus input: a file, a directory (read recursively), a glob
(``data/*.xml.gz``, ``data/**/*.nxml``) or an object-store URI (``s3://bucket/prefix/``,
``gs://bucket/file.xml.gz``, a glob after the bucket too). Output: the files under it (local
``Path``s made absolute; URIs as ``str``), a binary stream of one file (``.gz`` decompressed by
suffix) and, for parsers that need a file on disk (PDF), a local copy.

Object stores go through ``pyarrow.fs`` (``FileSystem.from_uri``), so any scheme pyarrow knows
works (``s3``, ``gs``/``gcs``, ``hdfs``, ``abfs``). Credentials and endpoints come from the
environment, as pyarrow reads them: for S3 the AWS SDK chain (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_PROFILE`` and ``~/.aws/credentials``,
instance metadata) and ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL`` for an S3-compatible
server such as MinIO (``from_uri`` honours them; ``S3FileSystem()`` built directly does not, which
is why this module only uses ``from_uri``); for GCS ``GOOGLE_APPLICATION_CREDENTIALS`` (Google's default credentials), ``STORAGE_EMULATOR_HOST``
for an emulator, and ``MEDGRAPH_STORAGE_RETRY_S`` (default 10) bounding how long an unreachable
service is retried.
See docs/inputs.md.

Listing (``list_files``) reads metadata only; reading happens where a shard is loaded. Every
problem with an input (missing path, empty glob, unknown bucket, unreachable endpoint, bad
credentials) is a ``StorageError`` whose message says what went wrong.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import gzip
import hashlib
import io
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

Location = str | Path  # a local path, or an object-store URI (str)

REMOTE_SCHEMES = frozenset({"s3", "gs", "gcs", "hdfs", "viewfs", "abfs", "abfss"})
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]+)://")
# ``Path("s3://bucket/key")`` collapses the double slash: "s3:/bucket/key"
_MANGLED = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]+):/(?!/)")
_GLOB = re.compile(r"[*?\[]")
COPY_CHUNK = 1 << 20
# A .gz input that expands to more than this many times its compressed size, past BOMB_FLOOR, is a
# compression bomb: its read fails (the file alone, with this reason); real corpus files expand ~3-10x
BOMB_RATIO = 100
BOMB_FLOOR = 1 << 30
MAX_WHOLE_FILE_BYTES = 512 << 20  # a file read whole (a JSON array or object, a text file); JSONL streams
RETRY_ENV = "MEDGRAPH_STORAGE_RETRY_S"  # GCS: seconds an unreachable service is retried (default 10)


class StorageError(OSError):
    """An input that cannot be listed or read; the message is the reason to report."""


class _Raw(io.RawIOBase):
    """Anything with ``read(n)`` (a pyarrow input stream, a file) as a raw file, to be buffered (a
    pyarrow stream reads but cannot iterate lines); ``count``: the bytes read through it (a .gz
    file's compressed bytes)."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.count = stream, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.stream.read(len(buffer))
        buffer[: len(data)] = data
        self.count += len(data)
        return len(data)


class _Bounded(io.RawIOBase):
    """A decompressed stream that fails past ``BOMB_RATIO`` × the compressed bytes read (and
    ``BOMB_FLOOR``): a compression bomb stops here, not in the worker's memory or disk."""

    def __init__(self, inner: IO[bytes], compressed: _Raw) -> None:
        self.inner, self.compressed, self.count = inner, compressed, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.inner.read(len(buffer))
        self.count += len(data)
        if self.count > BOMB_FLOOR and self.count > BOMB_RATIO * max(1, self.compressed.count):
            raise StorageError(f"decompresses to more than {BOMB_RATIO} times its size (past "
                               f"{BOMB_FLOOR >> 20} MB): not read, a compression bomb?")
        buffer[: len(data)] = data
        return len(data)


def normalise(location: Location) -> Location:
    """A URI as ``str`` (a ``file://`` URI and a URI that went through ``Path`` repaired), else a ``Path``."""
    text = str(location)
    if text.startswith("file://"):
        return Path(urlsplit(text).path)
    mangled = _MANGLED.match(text)
    if mangled and mangled.group(1).lower() in REMOTE_SCHEMES:
        text = f"{mangled.group(1)}://{text[mangled.end():]}"
    if is_uri(text):
        return text
    return location if isinstance(location, Path) else Path(text)


def is_uri(location: Location) -> bool:
    """True for an object-store URI (``s3://``, ``gs://`` ...); local paths and ``file://`` are not."""
    m = _SCHEME.match(str(location))
    return bool(m) and m.group(1).lower() in REMOTE_SCHEMES  # type: ignore[union-attr]


def canonical(location: Location) -> str:
    """The stable name of a source: its URI, or its absolute local path (symlinks kept)."""
    loc = normalise(location)
    return loc if isinstance(loc, str) else os.path.abspath(loc)


def basename(location: Location) -> str:
    loc = normalise(location)
    return loc.rstrip("/").rsplit("/", 1)[-1] if isinstance(loc, str) else loc.name


def parent(location: Location) -> Location:
    loc = normalise(location)
    return loc.rstrip("/").rsplit("/", 1)[0] if isinstance(loc, str) else loc.parent


# --- object stores --------------------------------------------------------------------------


def _split(uri: str) -> tuple[str, str, str]:
    """(scheme, bucket, key) of a URI; a query string is not supported (use the environment)."""
    parts = urlsplit(uri)
    if parts.query:
        raise StorageError("query parameters are not supported in input URIs; configure the endpoint "
                           "and credentials through the environment (docs/inputs.md)")
    if not parts.netloc:
        raise StorageError("no bucket in the URI")
    return parts.scheme.lower(), parts.netloc, parts.path.lstrip("/")


def _env_key() -> tuple[str, ...]:
    names = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_REGION",
             "AWS_DEFAULT_REGION", "GOOGLE_APPLICATION_CREDENTIALS", "STORAGE_EMULATOR_HOST", RETRY_ENV)
    return tuple(os.environ.get(n, "") for n in names)


@functools.lru_cache(maxsize=32)
def _filesystem(scheme: str, bucket: str, env: tuple[str, ...]) -> Any:
    """The pyarrow filesystem of one bucket (cached: for S3, ``from_uri`` asks for the bucket's region)."""
    from pyarrow import fs

    try:
        if scheme in ("gs", "gcs"):
            return _gcs()
        filesystem, _ = fs.FileSystem.from_uri(f"{scheme}://{bucket}/")
    except Exception as exc:  # ArrowInvalid (unknown scheme), OSError (region look-up failed)
        raise StorageError(f"cannot open the bucket: {_reason(exc)}") from exc
    return filesystem


def _gcs() -> Any:
    """GCS with a bounded retry time (pyarrow's default retries an unreachable service for many
    minutes) and ``STORAGE_EMULATOR_HOST`` (the Google SDKs' emulator variable) as the endpoint."""
    from pyarrow import fs

    kwargs: dict[str, Any] = {"retry_time_limit": timedelta(seconds=float(os.environ.get(RETRY_ENV) or 10))}
    emulator = os.environ.get("STORAGE_EMULATOR_HOST", "")
    if emulator:
        parts = urlsplit(emulator if "://" in emulator else f"http://{emulator}")
        kwargs.update(endpoint_override=parts.netloc, scheme=parts.scheme, anonymous=True)
    return fs.GcsFileSystem(**kwargs)


def _remote(uri: str) -> tuple[Any, str]:
    scheme, bucket, key = _split(uri)
    return _filesystem(scheme, bucket, _env_key()), f"{bucket}/{key}".rstrip("/")


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:400] if text else type(exc).__name__


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over '/'-separated keys: ``*`` and ``?`` stay within a path part, ``**`` crosses parts."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[" and "]" in pattern[i + 1:]:
            end = pattern.index("]", i + 1)
            body = pattern[i + 1:end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out) + r"\Z")


def _list_remote(uri: str, keep: Callable[[str], bool]) -> list[Location]:
    from pyarrow import fs

    scheme, bucket, key = _split(uri)
    filesystem, path = _remote(uri)
    try:
        if _GLOB.search(key):
            fixed = _GLOB.split(key, maxsplit=1)[0].rsplit("/", 1)
            base = f"{bucket}/{fixed[0]}" if len(fixed) == 2 else bucket
            pattern = _glob_regex(f"{bucket}/{key}")
            infos = filesystem.get_file_info(fs.FileSelector(base, recursive=True, allow_not_found=True))
            found = [i.path for i in infos if i.type == fs.FileType.File and pattern.match(i.path)]
            if not found:
                raise StorageError("no object matches the pattern")
            return [f"{scheme}://{p}" for p in sorted(found) if keep(p)]
        info = filesystem.get_file_info(path)
        if info.type == fs.FileType.File:
            return [uri]
        if info.type == fs.FileType.NotFound:
            raise StorageError("no such object or prefix (or no such bucket)")
        infos = filesystem.get_file_info(fs.FileSelector(path, recursive=True))
    except StorageError:
        raise
    except Exception as exc:  # OSError: unreachable endpoint, no such bucket, access denied
        raise StorageError(f"cannot list: {_reason(exc)}") from exc
    return [f"{scheme}://{i.path}" for i in sorted(infos, key=lambda i: str(i.path))
            if i.type == fs.FileType.File and keep(i.path)]


# --- public API -----------------------------------------------------------------------------


def list_files(location: Location, keep: Callable[[str], bool] = lambda _: True) -> list[Location]:
    """The files under ``location``, sorted.

    A file is returned as itself (whatever ``keep`` says: a named file is the caller's to judge);
    a directory, prefix or glob gives the files under it (recursively) for which
    ``keep(name or path)`` is true. Raises ``StorageError`` with the reason when nothing can be listed.
    """
    loc = normalise(location)
    if isinstance(loc, str):
        return _list_remote(loc, keep)
    if loc.is_file():
        return [Path(os.path.abspath(loc))]
    if loc.is_dir():
        return sorted(Path(os.path.abspath(p)) for p in loc.rglob("*") if p.is_file() and keep(str(p)))
    if _GLOB.search(str(loc)):
        matches = glob.glob(str(loc), recursive=True)
        if not matches:
            raise StorageError("no file matches the pattern")
        out: set[Path] = set()
        for match in matches:
            path = Path(match)
            if path.is_dir():
                out.update(Path(os.path.abspath(p)) for p in path.rglob("*") if p.is_file() and keep(str(p)))
            elif path.is_file() and keep(str(path)):
                out.add(Path(os.path.abspath(path)))
        return sorted(out)
    raise StorageError("no such file or directory")


def stamp(location: Location) -> tuple[int, int]:
    """(modification time in ns, size) of a file: what changes when it is rewritten."""
    loc = normalise(location)
    if isinstance(loc, Path):
        st = loc.stat()
        return st.st_mtime_ns, st.st_size
    filesystem, path = _remote(loc)
    try:
        info = filesystem.get_file_info(path)
    except Exception as exc:
        raise StorageError(f"cannot read: {_reason(exc)}") from exc
    if info.type.name != "File":
        raise StorageError("no such object")
    return int(info.mtime_ns or 0), int(info.size or 0)


@contextlib.contextmanager
def open_binary(location: Location) -> Iterator[IO[bytes]]:
    """The file's bytes as a stream; a ``.gz`` file is decompressed as it is read."""
    loc = normalise(location)
    with contextlib.ExitStack() as stack:
        raw: IO[bytes]
        if isinstance(loc, Path):
            raw = stack.enter_context(loc.open("rb"))
        else:
            filesystem, path = _remote(loc)
            try:
                stream = stack.enter_context(filesystem.open_input_stream(path, compression=None))
            except Exception as exc:
                raise StorageError(f"cannot read: {_reason(exc)}") from exc
            raw = io.BufferedReader(_Raw(stream), COPY_CHUNK)
        if str(loc).lower().endswith(".gz"):
            counted = _Raw(raw)
            unpacked = stack.enter_context(gzip.GzipFile(fileobj=io.BufferedReader(counted, COPY_CHUNK), mode="rb"))
            raw = io.BufferedReader(_Bounded(unpacked, counted), 1 << 16)  # type: ignore[arg-type]
        yield raw


def read_bytes(location: Location, limit: int | None = None) -> bytes:
    """The whole file (decompressed); more than ``limit`` bytes (default ``MAX_WHOLE_FILE_BYTES``)
    is a ``StorageError`` before it is all in memory."""
    limit = MAX_WHOLE_FILE_BYTES if limit is None else limit
    pieces, size = [], 0
    with open_binary(location) as fh:  # in pieces: read(limit + 1) would reserve the whole limit at once
        while size <= limit and (piece := fh.read(min(COPY_CHUNK, limit + 1 - size))):
            pieces.append(piece)
            size += len(piece)
    data = b"".join(pieces)
    if len(data) > limit:
        raise StorageError(f"is over {limit >> 20} MB, too large to read whole: split it into JSONL (one record per line)")
    return data


def _suffixes(name: str) -> str:
    """The suffix a temporary copy keeps ("x.pdf" → ".pdf", "x.xml.gz" → ".xml.gz")."""
    parts = name.rsplit(".", 2)
    return "." + ".".join(parts[-2:]) if len(parts) == 3 and parts[-1].lower() == "gz" else \
        ("." + parts[-1] if len(parts) > 1 else "")


@contextlib.contextmanager
def local_copy(location: Location) -> Iterator[Path]:
    """A local file with the content of ``location``: the path itself when local, else a
    temporary download (same suffix, compressed bytes kept) removed on exit."""
    loc = normalise(location)
    if isinstance(loc, Path):
        if not loc.is_file():
            raise StorageError("no such file")
        yield loc
        return
    filesystem, path = _remote(loc)
    fd, tmp = tempfile.mkstemp(prefix="medgraph-", suffix=_suffixes(basename(loc)))
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with filesystem.open_input_stream(path, compression=None) as src:
                    shutil.copyfileobj(src, out, COPY_CHUNK)
            except Exception as exc:
                raise StorageError(f"cannot read: {_reason(exc)}") from exc
        yield Path(tmp)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


_FILE_ID = re.compile(r"^file:(.+?)(?:@[0-9a-f]{10})?$")


def file_doc_id(path: Location) -> str:
    """The document ID of a text or PDF file: ``file:<name>@<10 hex digits>``.

    The digits are the start of the SHA-256 of the file's canonical location (its absolute
    path, symlinks kept, or its URI; a URI that went through ``Path`` is repaired first), so two
    ``report.pdf`` in different folders or buckets are two documents, while re-running a build
    over the same path gives the same ID and a changed file replaces its earlier version. The
    name stays readable in citations; ``file_doc_name`` gives it back.
    """
    location = canonical(path)
    digest = hashlib.sha256(location.encode("utf-8")).hexdigest()[:10]
    return f"file:{basename(location)}@{digest}"


def file_doc_name(doc_id: str) -> str | None:
    """The file name in a file document ID (``file:a.pdf@0123456789`` or the older ``file:a.pdf``);
    None for other IDs."""
    m = _FILE_ID.match(doc_id)
    return m.group(1) if m else None
