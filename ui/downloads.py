"""CSV downloads: a table with the inputs that produced it in its first lines, float noise taken out."""
from __future__ import annotations

import urllib.parse

import pandas as pd
import streamlit as st

import calc
from ui.sidebar import selection


def _is_money(column: str) -> bool:
    return "usd" in column.lower()


def _is_per_unit(column: str) -> bool:
    c = column.lower()
    return "per_" in c or "mtok" in c or "million" in c


def tidy_for_csv(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the float noise taken out of its numbers, for a CSV a person reads.

    Money columns (a name with "usd"): totals to the cent; prices per unit (a name with "per_", "mtok" or
    "million", e.g. ``per_generation_usd``) to a millionth of a dollar. Byte columns (a name with
    "bytes") to whole bytes. Other floats to 6 significant digits. Text, integers and booleans unchanged;
    NaN stays empty.
    """
    out = df.copy()
    for col in out.columns:
        values = out[col]
        if not pd.api.types.is_float_dtype(values):
            continue
        name = str(col)
        if _is_money(name):
            out[col] = values.round(6 if _is_per_unit(name) else 2)
        elif "bytes" in name.lower():
            out[col] = values.round().astype("Int64")
        else:
            out[col] = values.map(lambda v: float(f"{v:.6g}") if v == v else v)
    return out


def app_version() -> str:
    """The app's version: ``calc.__version__``, with the git commit when run from a checkout."""
    return _app_version()


@st.cache_resource(show_spinner=False)
def _app_version() -> str:
    import subprocess
    from pathlib import Path
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).resolve().parent,
                                capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return calc.__version__ + (f"+g{commit}" if commit else "")


def csv_with_inputs(df: pd.DataFrame, inputs: dict[str, object]) -> str:
    """``df`` as CSV text (``tidy_for_csv``, index left out), after one ``# name: value`` line per input.

    pandas reads it back with ``pd.read_csv(path, comment="#")``.
    """
    head = "".join(f"# {k}: {str(v).replace(chr(10), ' ')}\n" for k, v in inputs.items())
    return head + tidy_for_csv(df).to_csv(index=False)


def csv_inputs(inputs: dict[str, object] | None = None, sidebar: bool = True) -> dict[str, object]:
    """What produced a download: the app and its version, the time (UTC), the page's link (the address the
    browser has open, http://host/page?query, whose query string carries every input that differs from its
    default; the path alone where no browser is behind the run), the sidebar's model, GPU, dtypes and
    price (``sidebar=False``: left out, for a page whose table does not use them, such as the published
    measurements, whose model and accelerator are the rows' own), then the page's own ``inputs`` (e.g.
    context, batch)."""
    import datetime
    query = "&".join(f"{k}={urllib.parse.quote(str(v), safe=',=:./')}" for k, v in st.query_params.items())
    try:  # the address the browser has open: a link that opens the same page from the file, anywhere
        split = urllib.parse.urlsplit(st.context.url or "")
        site, path = (f"{split.scheme}://{split.netloc}" if split.scheme and split.netloc else ""), split.path
    except Exception:  # no browser behind this run (tests): the address is not known
        site, path = "", ""
    head = {"app": f"LLM Inference Explorer {app_version()}",
            "created_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
            "link": f"{site}{path or '/'}{'?' + query if query else ''}"}
    if sidebar:
        sel = selection()
        head.update({"model": f"{sel.model_id} ({sel.model.name})", "gpu": f"{sel.gpu_id} ({sel.accelerator.name})",
                     "weight_dtype": sel.weight_dtype, "kv_dtype": sel.kv_dtype,
                     "embedding": getattr(sel, "embedding", ""), "prefill_logits": getattr(sel, "logits", ""),
                     "price_per_gpu_hour_usd": f"{sel.price_per_hour_usd:.2f}"})
    return {**head, **(inputs or {})}


def download_csv(df: pd.DataFrame, filename: str, key: str, inputs: dict[str, object] | None = None,
                 sidebar: bool = True) -> None:
    """A button that downloads ``df`` as CSV: ``csv_with_inputs`` with the inputs of ``csv_inputs(inputs,
    sidebar)`` in the first lines, money to the cent and bytes whole (``tidy_for_csv``). The file is written
    when the button is clicked, not on every run. The button names its file, so that buttons side by side
    differ."""
    header = csv_inputs(inputs, sidebar)
    st.download_button(f"Download {filename}", lambda: csv_with_inputs(df, header).encode("utf-8"), file_name=filename,
                       mime="text/csv", key=key, help="The lines starting with # list the inputs that produced "
                       "the table; pandas reads it with pd.read_csv(path, comment='#').")
