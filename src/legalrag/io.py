"""File helpers: JSONL reading with line-numbered errors, atomic writes of files and directories."""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator

from legalrag.errors import InputError, WriteLockError


MAX_LINE_BYTES = 64 << 20  # one JSONL record larger than this is a broken file, not data worth holding in memory


def read_jsonl(path: str | os.PathLike, *,
               max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line; a bad line raises InputError naming it.

    Streams the file (memory stays bounded by the longest line, at most ``max_line_bytes``). UTF-8, with or
    without a byte-order mark, and UTF-16 with a BOM are read; other encodings (GBK...) are an InputError
    naming the line and how to convert the file."""
    p = Path(path)
    if not p.exists():
        raise InputError("file not found; check the path", path=str(p))
    if p.is_dir():
        raise InputError("expected a JSONL file, got a folder", path=str(p))
    with p.open("rb") as raw:
        head = raw.read(4)
    encoding = "utf-8"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    elif head.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8-sig"
    if encoding == "utf-16":  # rare; decoded as a text stream (lines are still bounded below)
        lines = _text_lines(p, encoding, max_line_bytes)
    else:
        lines = _utf8_lines(p, encoding, max_line_bytes)
    for lineno, line in lines:
        if not line.strip():
            continue
        if "\x00" in line:
            raise InputError("holds a NUL byte (a binary or UTF-16 file without a byte-order mark?); convert it "
                             "to UTF-8 text", path=str(p), line=lineno)
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc.msg} at column {exc.colno}); fix or remove this line",
                             path=str(p), line=lineno) from None
        except RecursionError:
            raise InputError("JSON nested too deeply to read; fix or remove this line", path=str(p),
                             line=lineno) from None
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object on each line", path=str(p), line=lineno)
        yield lineno, obj


def _too_long(p: Path, lineno: int, limit: int) -> InputError:
    return InputError(f"line longer than {limit >> 20} MiB; a JSONL file needs one record per line (is this "
                      "a JSON array or a file without line breaks?)", path=str(p), line=lineno)


def _utf8_lines(p: Path, encoding: str, limit: int) -> Iterator[tuple[int, str]]:
    with p.open("rb") as fh:
        lineno = 0
        while True:
            data = fh.readline(limit + 1)
            if not data:
                return
            lineno += 1
            if len(data) > limit:
                raise _too_long(p, lineno, limit)
            try:
                yield lineno, data.decode(encoding if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not UTF-8 text (bad byte 0x{data[exc.start]:02x} at column {exc.start + 1}); "
                                 "convert the file, e.g. `iconv -f GB18030 -t UTF-8 IN > OUT`", path=str(p),
                                 line=lineno) from None


def _text_lines(p: Path, encoding: str, limit: int) -> Iterator[tuple[int, str]]:
    try:
        with p.open(encoding=encoding) as fh:
            for lineno, line in enumerate(iter(lambda: fh.readline(limit + 1), ""), 1):
                if len(line) > limit:
                    raise _too_long(p, lineno, limit)
                yield lineno, line
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid {encoding} text ({exc.reason}); convert the file to UTF-8",
                         path=str(p)) from None


def write_json(path: str | os.PathLike, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=2))


def write_jsonl(path: str | os.PathLike, rows) -> None:
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write to a temp file in the same directory, then rename over the target."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a fresh temp directory beside ``path``; on success it replaces ``path``, on error it is removed.

    Readers never see a half-written index, even if the process is killed at any instruction: the new
    directory is swapped in with one atomic ``renameat2(RENAME_EXCHANGE)`` on Linux; elsewhere the old one is
    first moved aside and :func:`recover_dir` puts it back if a kill lands between the two renames. Only one
    process writes ``path`` at a time (a lock file beside it); a second one gets a :class:`WriteLockError`.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with write_lock(target):
        recover_dir(target)
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp"))
        try:
            yield tmp
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        _fsync_dir(tmp)
        if target.exists() and _exchange(tmp, target):
            shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the old directory
        else:
            old = None
            if target.exists():
                old = target.with_name(f".{target.name}.old-{os.getpid()}")
                os.replace(target, old)
            os.replace(tmp, target)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        _fsync_dir(target.parent)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where the system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # file system or kernel without the flag
        return False
    raise OSError(err, os.strerror(err), str(b))


def _fsync_dir(path: Path) -> None:
    """Make renames inside ``path`` durable (a no-op where directories cannot be opened, e.g. Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover_dir(path: str | os.PathLike) -> None:
    """Undo what a killed :func:`atomic_dir` left behind: put a moved-aside old directory back when the new
    one never arrived, and delete temp directories of writers that are no longer running."""
    target = Path(path)
    parent = target.parent
    if not parent.is_dir():
        return
    olds = sorted(parent.glob(f".{glob.escape(target.name)}.old-*"), key=lambda p: p.stat().st_mtime)
    for old in olds:
        if not target.exists():
            os.replace(old, target)
        else:
            shutil.rmtree(old, ignore_errors=True)
    for tmp in parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        pid = tmp.name[len(target.name) + 2:].split(".", 1)[0]
        if pid.isdigit() and not _pid_alive(int(pid)) and tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def write_lock(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive lock on writing ``path`` (the file ``.NAME.lock`` beside it) or raise WriteLockError.

    The kernel drops the lock when its holder dies, so a killed writer never leaves ``path`` locked."""
    target = Path(path)
    lock = target.with_name(f".{target.name}.lock")
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; writes are still atomic, the last one wins
        yield
        return
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise WriteLockError(f"{target} is being written by another legalrag process (lock {lock.name}); "
                                 "wait for it to finish and try again") from None
        try:  # the holder before us may have unlinked the lock file after we opened it: retry on the new one
            if os.fstat(fd).st_ino == os.stat(lock).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)
        os.close(fd)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def cache_dir(home: str | os.PathLike | None = None) -> Path:
    """Where models, vectors and LLM call caches live: ``home`` (the edges pass the ``paths.home`` setting,
    $LEGALRAG_HOME) or ~/.cache/legalrag."""
    p = Path(home) if home is not None else Path.home() / ".cache" / "legalrag"
    p.mkdir(parents=True, exist_ok=True)
    return p


def open_cache_db(path: str | os.PathLike, schema: str, what: str, **connect: Any):
    """An SQLite cache database with ``schema`` applied (WAL mode). A file that is not a usable SQLite database
    (damaged, truncated, another format) is an error naming it and saying what to do: caches are rebuilt on
    demand, so deleting the file loses nothing but time."""
    import sqlite3

    p = Path(path)
    try:
        conn = sqlite3.connect(str(p), timeout=60, **connect)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(schema)
        conn.commit()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"the {what} is not a usable SQLite database ({exc}); delete the file (and its -wal/-shm "
                         "siblings) and it is rebuilt on the next run", path=str(p)) from None
    return conn


def log_tail(path: str | os.PathLike, lines: int = 12) -> str:
    """The last ``lines`` lines of a log file, for an error message ("(no log)" when it cannot be read)."""
    try:
        return "\n".join(Path(path).read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def start_detached(cmd: list[str], state_file: Path, log: Path, url: str, ready: Callable[[], bool], *,
                   timeout: float, on_wait: Callable[[float], None] | None = None) -> tuple[Any, float | None]:
    """Run ``cmd`` in its own session (it outlives the command that started it), output appended to ``log``, its
    pid recorded in ``state_file`` (written atomically), and wait until ``ready()`` or ``timeout`` seconds.

    Returns (the process, the seconds it took), or (the process, None) when it did not get ready in time; a
    process that exits while starting raises nothing here: ``process.poll()`` says so (callers raise their own
    error with :func:`log_tail`)."""
    import json
    import subprocess
    import time

    with Path(log).open("ab") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    tmp = state_file.with_suffix(".tmp")
    tmp.write_text(json.dumps({"pid": proc.pid, "url": url, "started": time.time(), "cmd": cmd}), encoding="utf-8")
    tmp.replace(state_file)
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            return proc, None
        if ready():
            return proc, round(time.monotonic() - t0, 1)
        if on_wait is not None:
            on_wait(time.monotonic() - t0)
        time.sleep(0.5)
    return proc, None
