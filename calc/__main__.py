"""Command line: ``python -m calc --model llama-3.1-8b --gpu h100-sxm --context 8192 --batch 32``.

Prints the napkin table (the inference course, week 11, step 4) for a preset or any config.json; ``--json`` prints it as
JSON; ``--list`` prints the presets. Bad input prints one line to stderr and exits with status 2.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .hardware import get_accelerator, list_accelerators
from .memory import with_capacity
from .models import get_model, list_models
from .config_json import model_from_json_text
from .napkin import napkin_table


def _format(value: float, unit: str) -> str:
    if unit == "bytes":
        return f"{value / 1e9:,.3f} GB" if value >= 1e8 else f"{value:,.0f} B"
    if unit == "s":
        return f"{value * 1e3:,.3f} ms"
    if unit == "USD":
        return f"${value:,.3f}"
    if unit in ("sequences",):
        return f"{value:,.0f}"
    return f"{value:,.1f} {unit}"


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input)."""
    ap = argparse.ArgumentParser(prog="python -m calc", description="The napkin model of LLM inference.")
    ap.add_argument("--model", default="llama-3-8b", help="preset id (see --list)")
    ap.add_argument("--config", help="path to a Hugging Face config.json (overrides --model)")
    ap.add_argument("--gpu", default="h100-sxm", help="accelerator id (see --list)")
    ap.add_argument("--context", type=int, default=8192, help="tokens in the cache per sequence")
    ap.add_argument("--batch", type=int, default=1, help="concurrent sequences")
    ap.add_argument("--weight-dtype", default="bf16")
    ap.add_argument("--kv-dtype", default="bf16")
    ap.add_argument("--price", type=float, default=None, help="USD per accelerator-hour (default: list price)")
    ap.add_argument("--reserve-gb", type=float, default=0.0, help="memory kept free, GB (1e9 bytes)")
    ap.add_argument("--memory", default="datasheet", choices=("datasheet", "driver", "engine"),
                    help="capacity: the data sheet's (default), the driver's total, or an engine's share of it")
    ap.add_argument("--gpu-memory-utilization", type=float, default=0.9,
                    help="the engine's share of the driver's total with --memory engine (vLLM's default 0.9)")
    ap.add_argument("--embedding", default="gather", choices=("gather", "table"),
                    help="gather: a step reads B rows of the input embedding (engines, default); "
                         "table: the course's napkin, every parameter read every step")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--list", action="store_true", help="list the model and accelerator presets")
    args = ap.parse_args(argv)
    if args.list:
        print("models:       " + ", ".join(list_models()))
        print("accelerators: " + ", ".join(list_accelerators()))
        return 0
    try:
        if args.config:
            path = Path(args.config)
            if not path.is_file():
                raise ValueError(f"no such config file: {args.config}")
            # a file called config.json is named after its folder (as a downloaded model is)
            name = (path.resolve().parent.name if path.name == "config.json" else path.stem) or None
            model = model_from_json_text(path.read_text(), name=name)
        else:
            model = get_model(args.model)
        acc = with_capacity(get_accelerator(args.gpu), args.memory, args.gpu_memory_utilization)
        table = napkin_table(model, acc, args.context, args.batch, args.weight_dtype, args.kv_dtype,
                             args.price, args.reserve_gb * 1e9, embedding=args.embedding)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({
            "model": model.name, "accelerator": acc.name, "context_len": args.context, "batch": args.batch,
            "weight_dtype": args.weight_dtype, "kv_dtype": args.kv_dtype,
            "rows": table.to_dict(orient="records"),
        }, indent=2))
    else:
        print(f"{model.name} on {acc.name}: context {args.context:,}, batch {args.batch}, "
              f"weights {args.weight_dtype}, KV {args.kv_dtype}")
        width = max(len(q) for q in table["quantity"])
        for row in table.itertuples():
            print(f"  {row.quantity:<{width}}  {_format(row.value, row.unit):>16}   {row.note}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. piped into `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
