"""``python -m train.curves``: the job lives in :mod:`train.learn.curves` (see its ``--help``)."""

import sys

from .learn import curves as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.curves gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
