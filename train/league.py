"""``python -m train.league``: the job lives in :mod:`train.measure.league` (see its ``--help``)."""

import sys

from .measure import league as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.league gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
