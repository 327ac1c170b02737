"""From the roofline's lower bound to an estimate: measured bandwidth and compute utilisations.

The roofline step (``calc.roofline``) assumes every byte moves at the spec bandwidth W and every FLOP
runs at the spec peak P. Real engines reach a fraction of each: the model bandwidth utilisation (MBU,
bytes the step must move / (step time x W)) and the compute utilisation of its matmuls (MFU). The
estimate divides each part of the bound by its utilisation (the roofline of the achievable, not the
spec, numbers; Williams et al. 2009 draw it with measured ceilings) and keeps the bound's overlap rule:
``kv_s / MBU + max(weights_s / MBU, compute_s / MFU) + comm_s``. Defaults and the measurements behind
them are in ``calc/data/utilisation.json``, each with its model, engine, accelerator and source.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

from .checks import check_positive_number
from .models import DATA_DIR
from .roofline import StepTime


@lru_cache(maxsize=1)
def _data() -> dict:
    return json.loads((DATA_DIR / "utilisation.json").read_text())


@dataclass(frozen=True)
class Utilisation:
    """Fractions of the roofline an engine reaches, each in (0, 1].

    Fields:
        memory_bandwidth: MBU, achieved bytes/s over the spec bandwidth W.
        compute: MFU of the step's matmuls, achieved FLOP/s over the spec peak P.
        source: where the two numbers come from (not compared).

    Raises:
        ValueError: a utilisation that is not a number in (0, 1].
    """

    memory_bandwidth: float
    compute: float
    source: str = dataclasses.field(default="", compare=False)

    def __post_init__(self):
        for what in ("memory_bandwidth", "compute"):
            v = check_positive_number(getattr(self, what), f"{what} utilisation")
            if v > 1.0:
                raise ValueError(f"{what} utilisation must be a fraction in (0, 1] of the spec figure, got {v!r} "
                                 "(an engine cannot beat the data sheet; 0.7 means 70%)")


def default_utilisation() -> Utilisation:
    """The default MBU 0.69 and MFU 0.80 (``calc/data/utilisation.json``): gpt-fast's compiled 7B-8B decode at
    batch 1 on an A100 (1397-1411 GB/s of 2039), and the best bf16 matmul measured on an H100 SXM (80.3%)."""
    d = _data()
    return Utilisation(d["default"]["memory_bandwidth"], d["default"]["compute"], d["default_source"])


def utilisation_measurements() -> pd.DataFrame:
    """The published measurements behind the defaults: what (memory_bandwidth or compute), value, model,
    engine, accelerator, source."""
    return pd.DataFrame(_data()["measurements"])


def estimate_step(step: StepTime, utilisation: Utilisation | None = None) -> StepTime:
    """The roofline bound ``step`` turned into an estimate: each part divided by its utilisation.

    ``weights_s / MBU``, ``kv_s / MBU``, ``compute_s / MFU``; ``total_s = kv_s + max(weights_s, compute_s)
    + comm_s`` as in the bound (collectives kept as they are); tokens_per_s scaled by bound/estimate;
    FLOPs, bytes, batch and tokens unchanged. At MBU = MFU = 1 it is the bound itself. Llama-3-8B on an
    H100 SXM at 8K, B = 1 (bound 5.12 ms with the course's embedding table): 7.42 ms at MBU 0.69.

    Raises:
        ValueError: see ``Utilisation``.
    """
    u = utilisation or default_utilisation()
    weights_s = step.weights_s / u.memory_bandwidth
    kv_s = step.kv_s / u.memory_bandwidth
    compute_s = step.compute_s / u.compute
    total_s = kv_s + max(weights_s, compute_s) + step.comm_s
    return dataclasses.replace(step, weights_s=weights_s, kv_s=kv_s, compute_s=compute_s, total_s=total_s,
                               tokens_per_s=step.tokens_per_s * step.total_s / total_s)
