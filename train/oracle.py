"""``python -m train.oracle``: the job lives in :mod:`train.measure.oracle` (see its ``--help``)."""

import sys

from .measure import oracle as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.oracle gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
