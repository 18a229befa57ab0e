"""``python -m train.bench_batch``: the job lives in :mod:`train.speed.bench_batch` (see its ``--help``)."""

import sys

from .speed import bench_batch as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.bench_batch gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
