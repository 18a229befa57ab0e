"""Jobs that measure: paired evaluation, the ladder, the matrix (in process or on Ray), mixed tables,
behaviour, the clairvoyant bound, the benchmarks, and the results folders they write."""
