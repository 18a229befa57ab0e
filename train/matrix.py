"""``python -m train.matrix``: the job lives in :mod:`train.measure.matrix` (see its ``--help``)."""

import sys

from .measure import matrix as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.matrix gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
