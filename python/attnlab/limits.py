"""The limits attnlab.load checks before it allocates anything (docs/guide/python.md, "Limits").

A run directory is data someone may have sent you: every size its files claim is checked here
against these limits, and against the run's own config, before memory is asked for. Raise one
(``attnlab.limits.MAX_WEIGHTS_BYTES = 4 << 30``) to load a larger model on purpose.
"""

# One weights file (safetensors): the C++ readers' input cap (docs/guide/hardening.md).
MAX_WEIGHTS_BYTES = 1 << 30
# A safetensors header (JSON): a real one is a few kB per hundred tensors.
MAX_HEADER_BYTES = 16 << 20
# Tensors in one file: far more than any attnlab model has (a 64-layer model: about 900).
MAX_TENSORS = 100_000
# A model's parameters and saved buffers, counted from its config before it is built:
# 256 M float32 values, the 1 GiB of MAX_WEIGHTS_BYTES.
MAX_PARAMETERS = 1 << 28
# A JSON file of the run (config.json, state.json, summary.json).
MAX_JSON_BYTES = 16 << 20
# The text corpus a text task reads (task.text_path), all its files together.
MAX_CORPUS_BYTES = 1 << 30
# Entries of a run's checkpoints/ folder listed for attnlab.load(DIR, step=N).
MAX_KEPT_CHECKPOINTS = 100_000
