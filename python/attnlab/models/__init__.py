"""Plain-PyTorch twins of attnlab's models, one mechanism per file, with attnlab's parameter
names (docs/guide/python.md has the table).

``build_model(config, task)`` builds the model of a resolved config for a task (attnlab's
vocabulary and sequence length come from the task); ``load_state`` then loads attnlab's weights.
"""
from .base import AttentionBase, AttentionSpec
from .conn import ConnModel, ConnTransformer
from .dot import DotAttention
from .kernel import GaussianAttention, LinearSimAttention, PseudoAttention, SemiFusionAttention
from .ky import ConnectionNet, KyAttention
from .neural import NeuralAttention
from .transformer import MECHANISMS, Block, Transformer, make_attention

__all__ = ["build_model", "AttentionBase", "AttentionSpec", "Block", "Transformer",
           "ConnModel", "ConnTransformer", "DotAttention", "KyAttention", "ConnectionNet",
           "NeuralAttention", "PseudoAttention", "SemiFusionAttention", "GaussianAttention",
           "LinearSimAttention", "MECHANISMS", "make_attention"]


def build_model(config, task, ky_impl="dense"):
    """The model of a resolved config: a Transformer, or a ConnTransformer for architecture
    "conn". Freshly initialised the way attnlab initialises (its random draws are its own)."""
    m = config["model"]
    if m["architecture"] == "conn":
        return ConnTransformer(m, task.vocab, task.length)
    return Transformer(m, task.vocab, task.length, getattr(task, "patch_dim", 0), ky_impl)
