"""The core's whole trace against a PyTorch trace of the same fields, and A/B runs of two trees.

    .venv/bin/python -m benchmarks.core_trace [--repeat 30]          # ours vs torch, interleaved
    .venv/bin/python -m benchmarks.core_trace --ab OLD_TREE NEW_TREE --rounds 4 [--cpu]
    .venv/bin/python -m benchmarks.core_trace --ab OLD_TREE NEW_TREE --one-process --rounds 200
    .venv/bin/python -m benchmarks.core_trace --first-touch       # page faults: what they cost

`encode` at the defaults (196 tokens, d_model 512, 8 heads, 6 layers, d_ff 2048, post-norm,
ReLU) keeps every intermediate. `torch_trace` computes the same fields with torch on as many
threads as NumPy's BLAS has (2 here) and keeps them too: patches, embedded, x0, and per layer
q, k, v, heads [h, S, d_head] (contiguous), scores, attn [h, S, S], concat, attn_out, resid_1,
LayerNorm's mean, var, normed, out, ffn_hidden, ffn_out, resid_2 and the second LayerNorm's.
The two are timed in turns in one process (this machine is shared: turns keep the noise alike)
and the medians and minima printed, with their ratio, the machine's float32 matmul rate
(1024³, NumPy) and the share of it `encode` reaches (its matrix products' FLOPs / time), and
the floor: the products' FLOPs at that rate, against torch's time.

With `--ab`, each tree's `encode` is timed in its own process, in turns (`--only-ours --tree`):
how a change of the core moved it; with `--one-process`, both cores in one process, in turns
(`core0`, `core1`): the steadier comparison (in separate processes the per-process medians
of one commit ranged from 73 to 106 ms on a quiet machine: each process lays out its heap
its own way).
With `--first-touch`, `encode` alone in two fresh processes: with glibc's defaults (freed
memory goes back to the system, so each trace's new arrays fault in fresh pages) and with the
heap kept (`KEPT_HEAP`: nothing returned, the next trace reuses the last one's pages): the
minor page faults per trace and what they cost.
Figures, not pass/fail. Torch is a benchmark-only import.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

# OpenBLAS's worker threads spin for a while after each product, waiting for the next: timed in
# turns, they took the core torch's second thread needed (torch 2 threads 117–127 ms in turns,
# 44–50 ms alone or with this), and ours lost 10 % to its own spinning thread on the second
# logical CPU. 4 (2⁴ cycles) is OpenBLAS's shortest wait; read once, when NumPy loads OpenBLAS.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import numpy as np  # noqa: E402 (after the variable above)

ROOT = Path(__file__).resolve().parent.parent
# glibc tunables that keep freed memory in the process (trim 1 GiB, mmap 256 MiB): `--first-touch`
KEPT_HEAP = "glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=268435456"


def times_ms(fns: dict[str, Callable[[], object]], repeat: int,
             clock: Callable[[], float] = time.perf_counter) -> dict[str, list[float]]:
    """Each function called `repeat` times, in turns (a, b, a, b, …), after one warm-up call
    each: times in ms by name (wall; `time.process_time`: CPU, steadier on a busy machine)."""
    for fn in fns.values():
        fn()
    out: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = clock()
            fn()
            out[name].append(1000 * (clock() - t0))
    return out


def sgemm_gflops(n: int = 1024, repeat: int = 9) -> float:
    """The best float32 GFLOP/s of an n × n × n NumPy product (2·n³ FLOPs)."""
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    best = min(times_ms({"mm": lambda: a @ b}, repeat)["mm"])
    return 2 * n**3 / (best / 1000) / 1e9


def torch_trace(image, params, cfg):  # noqa: ANN001, ANN201 (torch types stay in this file)
    """The note's encoder (post-norm, ReLU, sinusoidal PE, no biases) in torch, every field of
    `EncoderTrace` kept. image: [S, S, C] float32 array; returns the list of kept tensors."""
    import torch  # noqa: PLC0415 (a benchmark-only dependency)

    from encoder_core import positional_encoding  # noqa: PLC0415

    P, h, eps = cfg.patch_size, cfg.n_heads, cfg.ln_eps
    # our weights are read-only arrays; torch only reads them here (copying would time copies)
    warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
    t = torch.from_numpy
    img = t(np.array(image, dtype=np.float32))  # [S, S, C]
    g = img.shape[0] // P
    # patchify: (gh p1) (gw p2) c -> (gh gw) (p1 p2 c)
    patches = img.reshape(g, P, g, P, -1).permute(0, 2, 1, 3, 4).reshape(g * g, -1).contiguous()
    embedded = patches @ t(params.W_E)  # [N, d]
    pe = t(positional_encoding(g * g, cfg.d_model))
    x = embedded + pe  # x0
    kept = [img, patches, embedded, pe, x]
    N, d = x.shape

    def ln(y):  # noqa: ANN001, ANN202
        mean = y.mean(-1)
        centred = y - mean[:, None]
        var = (centred * centred).mean(-1)
        normed = centred * torch.rsqrt(var + eps)[:, None]
        return mean, var, normed, normed * gamma + beta

    for p in params.layers:
        def heads_of(y):  # noqa: ANN001, ANN202
            return y.reshape(N, h, d // h).transpose(0, 1).contiguous()  # [h, N, d_head]
        q, k, v = (heads_of(x @ t(W)) for W in (p.W_Q, p.W_K, p.W_V))
        scores = q @ k.transpose(1, 2) / cfg.score_scale  # [h, N, N]
        attn = torch.softmax(scores, -1)
        heads = attn @ v  # [h, N, d_head]
        concat = heads.transpose(0, 1).reshape(N, d)
        attn_out = concat @ t(p.W_O)
        resid_1 = x + attn_out
        gamma, beta = t(p.gamma_1), t(p.beta_1)
        ln_1 = ln(resid_1)
        hidden = torch.relu(ln_1[3] @ t(p.W_1) + t(p.b_1))
        ffn_out = hidden @ t(p.W_2) + t(p.b_2)
        resid_2 = ln_1[3] + ffn_out
        gamma, beta = t(p.gamma_2), t(p.beta_2)
        ln_2 = ln(resid_2)
        kept += [q, k, v, scores, attn, heads, concat, attn_out, resid_1, *ln_1, hidden,
                 ffn_out, resid_2, *ln_2]
        x = ln_2[3]
    return kept


def load_core(tree: Path, name: str = "encoder_core") -> ModuleType:
    """Import `encoder_core` from another checkout (`tree`, e.g. a `git worktree` of an older
    commit) as the package `name`: under its own name, every later `import encoder_core` gets
    it; under another (the core's imports are all relative), two cores live in one process."""
    init = tree / "encoder_core" / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        name, init, submodule_search_locations=[str(init.parent)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def defaults(core: ModuleType) -> tuple:
    """`core`'s default config, its random weights and a seeded image [S, S, C] in [0, 1)."""
    cfg = core.EncoderConfig()
    image = np.random.default_rng(1).random((cfg.image_size,) * 2 + (cfg.channels,),
                                            dtype=np.float32)
    return cfg, core.init_params(cfg), image


def ours_only(repeat: int, cpu: bool = False) -> list[float]:
    """`encode` at the defaults, `repeat` timed calls (ms, wall or CPU) after one warm-up."""
    import encoder_core  # noqa: PLC0415
    from encoder_core import encode  # noqa: PLC0415

    cfg, params, image = defaults(encoder_core)
    clock = time.process_time if cpu else time.perf_counter
    return times_ms({"ours": lambda: encode(image, cfg, params)}, repeat, clock)["ours"]


def minor_faults() -> int:
    """This process's minor page faults so far (a first touch of a fresh page)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def ours_faults(repeat: int) -> tuple[list[float], list[int]]:
    """`encode` at the defaults, `repeat` calls after one warm-up: wall ms and minor page
    faults of each."""
    import encoder_core  # noqa: PLC0415
    from encoder_core import encode  # noqa: PLC0415

    cfg, params, image = defaults(encoder_core)
    encode(image, cfg, params)
    ms, faults = [], []
    for _ in range(repeat):
        f0, t0 = minor_faults(), time.perf_counter()
        encode(image, cfg, params)
        ms.append(1000 * (time.perf_counter() - t0))
        faults.append(minor_faults() - f0)
    return ms, faults


def first_touch(repeat: int, rounds: int) -> None:
    """`ours_faults` in fresh processes, glibc's defaults and the heap kept, in turns."""
    runs: dict[str, tuple[list[float], list[int]]] = {}
    for _ in range(rounds):
        for label, tunables in (("glibc's defaults", ""), ("heap kept", KEPT_HEAP)):
            env = {**os.environ, "GLIBC_TUNABLES": tunables}
            cmd = [sys.executable, "-m", "benchmarks.core_trace", "--only-ours", "--faults",
                   "--repeat", str(repeat)]
            out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                                 check=True).stdout.split("\n")
            ms, faults = runs.setdefault(label, ([], []))
            ms += [float(v) for v in out[0].split()]
            faults += [int(v) for v in out[1].split()]
    for label, (ms, faults) in runs.items():
        f = statistics.median(faults)
        print(f"{label:17} median {statistics.median(ms):6.1f} ms  min {min(ms):6.1f} ms  "
              f"{f:7.0f} minor faults per trace ({f * resource.getpagesize() / 2**20:.0f} MiB "
              f"of fresh pages); {len(ms)} calls in {rounds} processes")


def against_torch(repeat: int) -> None:
    import torch  # noqa: PLC0415

    import encoder_core  # noqa: PLC0415
    from encoder_core import encode  # noqa: PLC0415
    from encoder_core.views.analysis import forward_flops  # noqa: PLC0415

    cfg, params, image = defaults(encoder_core)
    blas = blas_info()
    torch.set_num_threads(blas["num_threads"])
    ours = encode(image, cfg, params)
    theirs = torch_trace(image, params, cfg)
    err = float((theirs[-1].numpy() - ours.output).__abs__().max())
    rate = sgemm_gflops()
    with torch.inference_mode():
        ms = times_ms({"ours": lambda: encode(image, cfg, params),
                       "torch": lambda: torch_trace(image, params, cfg)}, repeat)
    rate = max(rate, sgemm_gflops())  # before and after: the better of the two
    gflop = forward_flops(cfg) / 1e9
    med = {k: statistics.median(v) for k, v in ms.items()}
    best = {k: min(v) for k, v in ms.items()}
    print(f"numpy {np.__version__} ({blas['internal_api']} {blas['version']}, "
          f"{blas['architecture']}, {blas['num_threads']} threads), torch {torch.__version__} "
          f"({torch.get_num_threads()} threads); max |Δ output| {err:.1e}")
    print(f"sgemm 1024³: {rate:.1f} GFLOP/s;  {gflop:.2f} GFLOP of products per trace")
    for k in ("ours", "torch"):
        print(f"{k:6} median {med[k]:7.1f} ms  min {best[k]:7.1f} ms  "
              f"({gflop / (best[k] / 1000):.1f} GFLOP/s at the min, "
              f"{100 * gflop / (best[k] / 1000) / rate:.0f} % of sgemm)")
    print(f"ours / torch: {med['ours'] / med['torch']:.3f} (medians), "
          f"{best['ours'] / best['torch']:.3f} (minima); {repeat} turns each")
    floor_ms = 1000 * gflop / rate
    print(f"floor: the products alone at the sgemm rate take {floor_ms:.1f} ms, "
          f"{floor_ms / best['torch']:.2f}× torch's best trace ({floor_ms / med['torch']:.2f}× "
          "its median): no trace of these fields in float32 can be faster")


def blas_info() -> dict:
    try:
        from threadpoolctl import threadpool_info  # noqa: PLC0415
    except ImportError:
        threads = int(os.environ.get("OPENBLAS_NUM_THREADS", os.cpu_count() or 1))
        return {"internal_api": "BLAS", "version": "?", "architecture": "?",
                "num_threads": threads}
    return next(i for i in threadpool_info() if i["user_api"] == "blas")


def ab(trees: list[str], rounds: int, repeat: int, cpu: bool) -> None:
    """Each tree's `encode` in its own process, in turns, `rounds` times."""
    runs: dict[str, list[float]] = {tree: [] for tree in trees}
    for _ in range(rounds):
        for tree in trees:
            cmd = [sys.executable, "-m", "benchmarks.core_trace", "--only-ours", "--tree", tree,
                   "--repeat", str(repeat), *(["--cpu"] if cpu else [])]
            out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout
            runs[tree] += [float(v) for v in out.split()]
    for tree, ms in runs.items():
        medians = [statistics.median(ms[i:i + repeat]) for i in range(0, len(ms), repeat)]
        print(f"{tree}: median {statistics.median(ms):.1f} ms, min {min(ms):.1f} ms; "
              f"per round {', '.join(f'{m:.1f}' for m in medians)}")


def ab_one_process(trees: list[str], rounds: int, cpu: bool) -> None:
    """Every tree's core loaded in this process (`core0`, `core1`, …) and `encode` timed in
    turns, the order reversed every other round: what a change of the code costs, without
    the process-to-process noise of `ab` (benchmarks/README.md, core_trace.py)."""
    runs = {}
    for i, tree in enumerate(trees):
        core = load_core(Path(tree), f"core{i}")
        cfg, params, image = defaults(core)
        runs[tree] = functools.partial(core.encode, image, cfg, params)
    clock = time.process_time if cpu else time.perf_counter
    ms: dict[str, list[float]] = {tree: [] for tree in trees}
    for r in range(rounds):
        order = {tree: runs[tree] for tree in (trees if r % 2 == 0 else trees[::-1])}
        for tree, v in times_ms(order, 1, clock).items():
            ms[tree] += v
    for tree, v in ms.items():
        print(f"{tree}: median {statistics.median(v):.1f} ms, "
              f"10th percentile {np.percentile(v, 10):.1f} ms, min {min(v):.1f} ms")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--ab", nargs="+", metavar="TREE", help="time these trees' encode in turns")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--one-process", action="store_true", help="with --ab: both cores in this "
                    "process, --rounds turns of one call each (e.g. --rounds 200)")
    ap.add_argument("--cpu", action="store_true", help="with --ab: CPU time, not wall time "
                    "(with OPENBLAS_NUM_THREADS=1, the steadier figure on a busy machine)")
    ap.add_argument("--first-touch", action="store_true", help="encode alone, page faults "
                    "per trace with glibc's defaults and with the heap kept")
    ap.add_argument("--only-ours", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--faults", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tree", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.only_ours and args.faults:
        ms, faults = ours_faults(args.repeat)
        print(" ".join(f"{v:.2f}" for v in ms))
        print(" ".join(str(v) for v in faults))
    elif args.first_touch:
        first_touch(args.repeat, args.rounds)
    elif args.only_ours:
        if args.tree:
            load_core(Path(args.tree))
        print(" ".join(f"{v:.2f}" for v in ours_only(args.repeat, args.cpu)))
    elif args.ab and args.one_process:
        ab_one_process(args.ab, args.rounds, args.cpu)
    elif args.ab:
        ab(args.ab, args.rounds, args.repeat, args.cpu)
    else:
        against_torch(args.repeat)


if __name__ == "__main__":
    main()
