"""What a local sweep worker runs as it starts (``LocalCluster(preload=[...])``): it ignores Ctrl-C.

Ctrl-C at a terminal reaches the whole process group; the sweep's own process answers it by stopping the cluster
(:func:`sims.sweep._stop_quietly`), instead of every worker printing its own KeyboardInterrupt traceback.
"""

from __future__ import annotations

import signal


def dask_setup(worker) -> None:
    """Ignore SIGINT in this worker process (its main thread runs the worker's event loop).

    Parameters
    ----------
    worker : distributed.Worker
        The worker starting (Dask's preload hook passes it; unused).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
