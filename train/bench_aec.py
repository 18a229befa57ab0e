"""``python -m train.bench_aec``: the job lives in :mod:`train.speed.bench_aec` (see its ``--help``)."""

import sys

from .speed import bench_aec as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.bench_aec gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
