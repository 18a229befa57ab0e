"""``python -m train.convert_model``: the job lives in :mod:`train.learn.convert_model` (see its ``--help``)."""

import sys

from .learn import convert_model as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.convert_model gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
