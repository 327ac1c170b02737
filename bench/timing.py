"""Wall-clock timing shared by the bench scripts (printed figures, not timed tests)."""
import statistics
import time


def call_times_s(fn, repeat: int, warmup: bool = True) -> list[float]:
    """Wall time in seconds of each of ``repeat`` calls of ``fn()``, after one untimed call if ``warmup``."""
    if warmup:
        fn()  # e.g. loads the catalogues
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def median_ms(fn, repeat: int = 20) -> tuple[float, float]:
    """(median, best) wall time in ms of ``repeat`` calls of ``fn()`` after one warm-up call."""
    times = call_times_s(fn, repeat)
    return statistics.median(times) * 1e3, min(times) * 1e3
