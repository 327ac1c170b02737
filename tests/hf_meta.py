"""The oracle of the parameter-count tests: transformers' own model class, built on the meta device."""
import pytest


def transformers_param_count(model_type: str, config: dict):
    """(parameter count, config object) of transformers' causal-LM class for ``model_type`` with ``config``.

    Built on the meta device (shapes only, no memory). DeepSeek-V3's ``e_score_correction_bias`` is a buffer
    in transformers but a stored checkpoint tensor, so those buffers are counted too. Skips the calling test
    where torch or transformers is not installed.
    """
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    conf = transformers.AutoConfig.for_model(model_type, **config)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(conf)
    n = sum(p.numel() for p in model.parameters())
    n += sum(b.numel() for name, b in model.named_buffers() if name.endswith("e_score_correction_bias"))
    return n, conf
