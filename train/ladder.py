"""``python -m train.ladder``: the job lives in :mod:`train.measure.ladder` (see its ``--help``)."""

import sys

from .measure import ladder as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.ladder gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
