"""``python -m train.serve``: the job lives in :mod:`train.playing.serve` (see its ``--help``)."""

import sys

from .playing import serve as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.serve gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
