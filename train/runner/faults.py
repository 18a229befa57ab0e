"""Faults of the machine rather than of the job — a full disk, a file-size limit, a read-only or forbidden folder,
a name too long, memory run out — told in one line that names the fault, never as a traceback. Every job gets
this from the runner (train.runner.job); what the fault leaves behind is what an interrupt leaves (the job's
``kept``): the folders' files are written atomically, so nothing half-written is ever taken for a result."""

from __future__ import annotations

import errno

FAULTS = {
    errno.EFBIG: "a file grew past the file-size limit (ulimit -f)",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENAMETOOLONG: "a file name is too long",
    errno.ENOMEM: "out of memory",
    errno.EMFILE: "too many open files (ulimit -n)",
}
#: how C++ libraries (torch's allocator and its zip writer) word the same faults, without an errno
WORDED = {
    "not enough memory": "out of memory",
    "bad_alloc": "out of memory",
    "file write failed": "a file could not be written (a full disk or a file-size limit)",
}


def fault_of(error: BaseException) -> str | None:
    """The machine's fault behind ``error`` (or an error it was raised from), in words with what it concerns;
    None for any other error, which stays a traceback: a bug must be seen."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, MemoryError):
            return "out of memory"
        if isinstance(error, OSError) and error.errno in FAULTS:
            where = next((str(name) for name in (error.filename, error.filename2) if name), None)
            return FAULTS[error.errno] + (f": {where}" if where else "")
        if isinstance(error, RuntimeError):
            text = str(error)
            for words, fault in WORDED.items():
                if words in text:
                    return fault
        error = error.__cause__ or error.__context__
    return None
