"""``python -m train.play``: the job lives in :mod:`train.playing.terminal` (see its ``--help``)."""

import sys

from .playing import terminal as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.play gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
