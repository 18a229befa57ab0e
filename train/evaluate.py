"""``python -m train.evaluate``: the job lives in :mod:`train.measure.evaluate` (see its ``--help``)."""

import sys

from .measure import evaluate as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.evaluate gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
