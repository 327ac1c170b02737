"""CSV downloads: the inputs that produced a table in its first lines, money to the cent, bytes whole."""
import io

import numpy as np
import pandas as pd

from ui.downloads import csv_with_inputs, tidy_for_csv


def test_money_to_the_cent_prices_per_unit_finer_bytes_whole():
    df = pd.DataFrame({
        "name": ["flagship"],
        # 1400 tokens x $5/1M x 165,000 generations, summed in floating point: 1154.9999999999998
        "input_missed_usd": [sum([0.007] * 165_000)],
        "per_generation_usd": [0.021675000000000003],     # 21,675 USD per 1M generations
        "kv_bytes": [1_073_741_824.0000002],             # 131,072 B x 8,192 tokens
        "total_s": [0.005123456789],
        "batch": [32],
    })
    assert df["input_missed_usd"][0] != 1155.0                     # the noise is really there
    out = tidy_for_csv(df)
    assert out["input_missed_usd"][0] == 1155.0
    assert out["per_generation_usd"][0] == 0.021675
    assert out["kv_bytes"][0] == 1_073_741_824 and str(out["kv_bytes"].dtype) == "Int64"
    assert out["total_s"][0] == 0.00512346                          # 6 significant digits
    assert out["batch"][0] == 32 and out["name"][0] == "flagship"
    text = tidy_for_csv(df).to_csv(index=False)
    assert "1155.0," in text and "1154.99" not in text and "1073741824," in text


def test_inputs_head_the_file_and_pandas_reads_it_back():
    df = pd.DataFrame({"dau": [10.0, 100.0], "total_usd": [np.nan, 2872.8000000000002]})
    text = csv_with_inputs(df, {"model": "llama-3-8b (Llama-3-8B)", "gpu": "h100-sxm", "context_len": 8192,
                                "price_per_gpu_hour_usd": "3.99"})
    lines = text.splitlines()
    assert lines[:4] == ["# model: llama-3-8b (Llama-3-8B)", "# gpu: h100-sxm", "# context_len: 8192",
                         "# price_per_gpu_hour_usd: 3.99"]
    assert lines[4] == "dau,total_usd" and lines[6] == "100.0,2872.8"
    back = pd.read_csv(io.StringIO(text), comment="#")
    assert list(back.columns) == ["dau", "total_usd"] and back["total_usd"][1] == 2872.8
    assert np.isnan(back["total_usd"][0])


def test_measured_page_header_names_the_rows_configuration_not_the_sidebars():
    # The published-measurements page downloads rows of one configuration of the data set (its model and
    # accelerator, e.g. deepseek-v3 on b200): the sidebar's GPU, dtypes and price did not produce them, so
    # its header leaves them out and carries the configuration's own columns.
    from ui.downloads import csv_inputs
    head = csv_inputs({"model": "deepseek-v3", "accelerator": "b200", "weight_dtype": "nvfp4"}, sidebar=False)
    assert head["model"] == "deepseek-v3" and head["accelerator"] == "b200" and head["weight_dtype"] == "nvfp4"
    assert not {"gpu", "kv_dtype", "price_per_gpu_hour_usd", "embedding", "prefill_logits"} & set(head)
    assert list(head)[:3] == ["app", "created_utc", "link"]
