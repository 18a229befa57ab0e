"""``python -m train.mixed``: the job lives in :mod:`train.measure.mixed` (see its ``--help``)."""

import sys

from .measure import mixed as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.mixed gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
