"""numba's first compile (or cache load) imports ``scipy.linalg.cython_blas`` — ``numba.np.arraymath`` checks that a
BLAS exists — and with it scipy's own OpenBLAS, which as it loads starts a thread per core, each with a buffer of
tens of MB, and when memory is short (``ulimit -v``) retries for ever, in C, holding the GIL: no signal is answered,
not even the runner's hard stop. Our compiled code calls no BLAS. So :func:`load_bounded` loads that library first,
bounded to one thread (no threads started, no buffers), and puts the setting back for everything else (numpy's own
OpenBLAS, torch's kernels and child processes keep theirs)."""

from __future__ import annotations

import os
import sys

SETTING = "OPENBLAS_NUM_THREADS"  # read by an OpenBLAS as it loads


def load_bounded() -> None:
    """Load scipy's OpenBLAS, one thread, unless it is loaded already (then it was started as its loader chose)."""
    if "scipy.linalg.cython_blas" in sys.modules:
        return
    previous = os.environ.get(SETTING)
    os.environ[SETTING] = "1"
    try:
        import scipy.linalg.cython_blas  # noqa: F401
    except ImportError:  # no scipy: numba finds no BLAS either, and needs none for our code
        pass
    finally:
        if previous is None:
            del os.environ[SETTING]
        else:
            os.environ[SETTING] = previous
