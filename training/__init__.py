"""Training of the shipped shapes classifier (NumPy, encoder_core's own forward and backward on
batches); the app never imports it.

On a small shared machine a multi-threaded BLAS fights other processes for the cores and runs
several times slower, so training uses one BLAS thread (set OPENBLAS_NUM_THREADS to override)
and spends the second core on generating the next batch.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
