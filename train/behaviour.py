"""``python -m train.behaviour``: the job lives in :mod:`train.measure.behaviour` (see its ``--help``)."""

import sys

from .measure import behaviour as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.behaviour gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
