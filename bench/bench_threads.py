"""How many torch threads a real-LM command should use (``--threads``; :mod:`sims.cli.threads`).

SmolLM2-135M-Instruct on the CPU: the same REPS passes of BATCH lfqa prompts x T sampled tokens
(the loop engine, no watermark) with 1 thread and with every core, first on an idle machine
(as idle as it is), then beside a second process that keeps one core busy (a Python spin loop).
Prints seconds per configuration, the ratio, and the one-minute load average each started under,
and the thread count :func:`sims.cli.threads.default_threads` would choose there.
"""

from __future__ import annotations

import multiprocessing
import os
import time

BATCH, T, REPS = 4, 40, 2


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def _time(model, prompts, V, threads: int) -> float:
    import torch

    from sims.torch_backend.real_lm import generate_texts

    torch.set_num_threads(threads)
    generate_texts(model, prompts[:1], 4, "none", seed=0, vocab_size=V, lm="smollm2", show=False)  # warm
    t0 = time.perf_counter()
    for r in range(REPS):
        generate_texts(model, prompts, T, "none", seed=r, vocab_size=V, lm="smollm2", batch=BATCH, show=False)
    return time.perf_counter() - t0


def main(argv=None) -> dict:
    from sims.cli.threads import cores, default_threads
    from sims.lm.real.model import load
    from sims.lm.real.prompts import prompt_ids

    model, tok = load("smollm2")
    V = len(tok)
    prompts = prompt_ids("lfqa", BATCH, tokenizer=tok)
    n = cores()
    res = dict(batch=BATCH, T=T, reps=REPS, cores=n)
    for where in ("alone", "beside_a_busy_process"):
        stop = multiprocessing.Event()
        spinner = None
        if where != "alone":
            spinner = multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
            spinner.start()
            time.sleep(1.0)
        res[f"{where}_load_avg"] = round(os.getloadavg()[0], 2)
        res[f"{where}_default_threads"] = default_threads()
        for k in sorted({1, n}):
            res[f"{where}_{k}_threads_s"] = round(_time(model, prompts, V, k), 2)
        res[f"{where}_ratio_{n}_over_1"] = round(res[f"{where}_{n}_threads_s"] / res[f"{where}_1_threads_s"], 2)
        if spinner is not None:
            stop.set()
            spinner.join()
        print(f"{where:24s} load {res[f'{where}_load_avg']:5.2f}: 1 thread {res[f'{where}_1_threads_s']:6.2f} s, "
              f"{n} threads {res[f'{where}_{n}_threads_s']:6.2f} s (ratio {res[f'{where}_ratio_{n}_over_1']:.2f}); "
              f"default would pick {res[f'{where}_default_threads']}", flush=True)
    return res


if __name__ == "__main__":
    main()
