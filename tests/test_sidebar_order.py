"""The sidebar's model and GPU lists: by family, then size (ui.sidebar.natural_key), whatever order presets were added."""
import calc
from ui.sidebar import natural_key
from pagetest import open_page


def test_sizes_read_as_sizes():
    # numbers read as numbers, and a size with its unit: 135M < 360M < 1.7B; 7B < 13B < 70B; 20B < 120B
    assert sorted(["smollm2-1.7b", "smollm2-360m", "smollm2-135m"], key=natural_key) == [
        "smollm2-135m", "smollm2-360m", "smollm2-1.7b"]
    assert sorted(["llama-2-70b", "llama-2-7b", "llama-2-13b"], key=natural_key) == [
        "llama-2-7b", "llama-2-13b", "llama-2-70b"]
    assert sorted(["gpt-oss-120b", "gpt-oss-20b"], key=natural_key) == ["gpt-oss-20b", "gpt-oss-120b"]
    assert sorted(["qwen2.5-72b", "qwen2.5-0.5b", "qwen2.5-7b"], key=natural_key) == [
        "qwen2.5-0.5b", "qwen2.5-7b", "qwen2.5-72b"]
    assert sorted(["a100-80gb", "a100-40gb", "a10"], key=natural_key) == ["a10", "a100-40gb", "a100-80gb"]


def test_every_preset_listed_once_in_family_order():
    models = sorted(calc.list_models(), key=natural_key)
    assert sorted(models) == sorted(calc.list_models())
    # each family's presets sit together: the first word of an id never comes back once left
    families = [m.split("-")[0].rstrip("0123456789.") for m in models]
    seen = []
    for f in families:
        assert f not in seen[:-1] or seen[-1] == f
        if not seen or seen[-1] != f:
            seen.append(f)


def test_the_gpus_list_price_names_its_listing_and_quotes_it_in_the_help():
    # H200: $5.40 per GPU-hour at Nebius as read on 2026-10-24 (calc/data/accelerators.json); the caption stays a line
    # of a few words, and its help quotes the listing with the copy read
    acc = calc.get_accelerator("h200")
    at = open_page(gpu="h200")
    caption = next(c for c in at.sidebar.caption if c.value.startswith("List price"))
    assert caption.value == "List price $5.40/h, Nebius HGX H200 on-demand (2026-10-24)."
    assert caption.help == acc.price_evidence and "'H200,Nebius,5.4'" in caption.help
