"""Number formats and their sizes, and the argument checks every calc function shares.

Sizes are storage bytes per element; int4 packs two elements per byte (0.5 B). The plain names leave
scale factors out, as the course material does; the block formats of ``calc.quant`` ("q4_K_M",
"mxfp4", "int4-g128", ...) count them (q4_0: 18 bytes per 32 elements = 0.5625 B).
"""
from __future__ import annotations

import math
from numbers import Integral, Real

#: Bytes per stored element for each dtype name the project accepts (DESIGN.md, "Dtype names").
DTYPE_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
}


def dtype_bytes(dtype: str, what: str = "dtype") -> float:
    """Return the bytes per element of ``dtype``.

    Args:
        dtype: one of ``DTYPE_BYTES`` ("fp32", "bf16", "fp16", "fp8", "int8", "int4") or a block
            format of ``calc.quant`` ("q8_0", "q4_0", "q4_K_M", "int4-g128", "fp8-block", "mxfp4",
            "nvfp4"), whose scales are included (mxfp4: 4.25 bits = 0.53125 B).
        what: the argument's name, used in the error message (e.g. "kv_dtype").

    Returns:
        bytes per element (float; 0.5 for int4).

    Raises:
        ValueError: unknown dtype; the message lists the valid names.
    """
    if isinstance(dtype, str) and dtype.lower() in DTYPE_BYTES:
        return DTYPE_BYTES[dtype.lower()]
    from .quant import FORMATS, bits_per_element  # late: quant needs nothing from here, dtypes loads first

    bits = bits_per_element(dtype) if isinstance(dtype, str) else None
    if bits is None:
        valid = ", ".join([*DTYPE_BYTES, *FORMATS])
        raise ValueError(f"{what} must be one of {valid}; got {dtype!r}")
    return bits / 8.0


def check_choice(value, choices, rule: str) -> str:
    """Return ``value`` if it is one of ``choices`` (a convention's names).

    Raises:
        ValueError: ``rule`` (what the value must be, e.g. "matmul must be one of auto, weight_only,
        low_precision") followed by "; got 'x'".
    """
    if value not in choices:
        raise ValueError(f"{rule}; got {value!r}")
    return value


def check_positive_int(value, what: str) -> int:
    """Return ``value`` as an int if it is a positive integer (bools rejected).

    Raises:
        ValueError: "context_len must be a positive integer, got 0" and the like.
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        if isinstance(value, Real) and not isinstance(value, bool) and float(value).is_integer() and value > 0:
            return int(value)
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    if value <= 0:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def check_nonneg_int(value, what: str) -> int:
    """Return ``value`` as an int if it is an integer >= 0.

    Raises:
        ValueError: negative or non-integer value.
    """
    if isinstance(value, bool) or not isinstance(value, Real) or not float(value).is_integer() or value < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {value!r}")
    return int(value)


def check_positive_number(value, what: str) -> float:
    """Return ``value`` as a float if it is a finite number > 0.

    Raises:
        ValueError: zero, negative, NaN, infinite or non-numeric value.
    """
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a positive number, got {value!r}")
    return float(value)


def check_nonneg_number(value, what: str) -> float:
    """Return ``value`` as a float if it is a finite number >= 0.

    Raises:
        ValueError: negative, NaN, infinite or non-numeric value.
    """
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a non-negative number, got {value!r}")
    return float(value)


def check_fraction(value, what: str) -> float:
    """Return ``value`` as a float if it lies in [0, 1].

    Raises:
        ValueError: outside [0, 1] or not a number.
    """
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or not 0 <= value <= 1:
        raise ValueError(f"{what} must be a number between 0 and 1, got {value!r}")
    return float(value)
