"""The transformer every attention mechanism plugs into (core/models/model.cpp).

Token embeddings (or, for images, a Linear patch embedding), a learned position table when
model.position is "learned" (rope and alibi act inside attention, "none" adds nothing), pre-LN
blocks x + attn(LN x), x + mlp(LN x) with dropout on both branches, a final LayerNorm and a head:
a causal language model's logits per position, or a classifier's (a CLS token prepended,
bidirectional attention, logits read at the CLS position).

Parameter names are attnlab's (``block0.attention.qkv.weight``, ``final_ln.weight``, ...), so
its weights load by name. The blocks are registered as block0, block1, ... for that, and listed
in ``model.blocks`` for code (``model.blocks[0].attention.hook_pattern``).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..hooks import HookPoint, run_with_cache
from ..mechanisms import resolve_layers
from .base import AttentionSpec
from .dot import DotAttention
from .kernel import GaussianAttention, LinearSimAttention, PseudoAttention, SemiFusionAttention
from .ky import KyAttention
from .neural import NeuralAttention

MECHANISMS = {"dot": DotAttention, "ky": KyAttention, "neural": NeuralAttention,
              "pseudo": PseudoAttention, "semi-fusion": SemiFusionAttention,
              "gaussian": GaussianAttention, "linear-sim": LinearSimAttention}


def make_attention(name, spec, ky_impl="dense"):
    """attnlab's make_attention: the named mechanism's module, for a layer of the resolved
    model.attention (where neural's "first-layer" placement already put dot after layer 0)."""
    if name not in MECHANISMS:
        raise ValueError(f"unknown attention mechanism {name!r} (known: {', '.join(MECHANISMS)})")
    if name == "ky":
        return KyAttention(spec, ky_impl)
    return MECHANISMS[name](spec)


class HookedLayerNorm(nn.LayerNorm):
    """nn.LayerNorm whose output passes hook_normalized (its parameters keep their names)."""

    def __init__(self, d):
        super().__init__(d)
        self.hook_normalized = HookPoint()

    def forward(self, x):
        return self.hook_normalized(super().forward(x))


class Block(nn.Module):
    """Pre-LN block. Hooks: hook_resid_pre, hook_attn_out, hook_resid_mid, hook_mlp_out,
    hook_resid_post, all [B, L, D]; hook_mlp_post [B, L, mlp_ratio D], the MLP's hidden
    activations after GELU."""

    def __init__(self, m, mechanism, causal, layer, ky_impl="dense", max_len=0):
        super().__init__()
        d, self.dropout = m["d_model"], m["dropout"]
        spec = AttentionSpec(d_model=d, heads=m["heads"], causal=causal, dropout=m["dropout"],
                             layer=layer, position=m.get("position", "learned"),
                             rope_base=m.get("rope_base", 10000.0),
                             options=dict(m["attention_options"].get(mechanism, {})),
                             max_len=max_len)
        self.hook_resid_pre = HookPoint()
        self.attention = make_attention(mechanism, spec, ky_impl)
        self.hook_attn_out, self.hook_resid_mid = HookPoint(), HookPoint()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, m["mlp_ratio"] * d), nn.Linear(m["mlp_ratio"] * d, d)
        self.hook_mlp_post = HookPoint()
        self.hook_mlp_out, self.hook_resid_post = HookPoint(), HookPoint()

    def forward(self, x, return_pattern=False):
        x = self.hook_resid_pre(x)
        a, pattern = self.attention(self.ln1(x), return_pattern=True) if return_pattern else \
            (self.attention(self.ln1(x)), None)
        h = self.hook_resid_mid(x + F.dropout(self.hook_attn_out(a), self.dropout, self.training))
        f = self.hook_mlp_out(self.fc2(self.hook_mlp_post(F.gelu(self.fc1(self.ln2(h))))))
        y = self.hook_resid_post(h + F.dropout(f, self.dropout, self.training))
        return (y, pattern) if return_pattern else y


class Transformer(nn.Module):
    """m: the resolved config's "model" section; vocab: token ids (0 for images); max_len: the
    longest input; patch_dim > 0: inputs are float patch vectors of that width."""

    def __init__(self, m, vocab, max_len, patch_dim=0, ky_impl="dense"):
        super().__init__()
        d, layers = m["d_model"], m["layers"]
        self.classifier, self.dropout = m["head"] == "classifier", m["dropout"]
        # The layers as attnlab builds them: every mechanism's layout rule applied (a resolved
        # config passes unchanged; one name for all layers expands as attnlab expands it).
        names = resolve_layers(m["attention"], layers, m["attention_options"])
        if patch_dim:
            self.patch = nn.Linear(patch_dim, d)
        else:
            self.token = nn.Embedding(vocab, d)
        self.max_positions = max_len + self.classifier
        if m.get("position", "learned") == "learned":
            self.position = nn.Parameter(torch.randn(self.max_positions, d) * 0.02)
        else:
            self.position = None
        if self.classifier:
            self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.hook_embed = HookPoint()  # [B, T, D]: embeddings (+ CLS, + positions)
        self.blocks = []  # a plain list: the modules are registered by attnlab's names below
        for i in range(layers):
            block = Block(m, names[i], not self.classifier, i, ky_impl, self.max_positions)
            self.add_module(f"block{i}", block)
            self.blocks.append(block)
        self.final_ln = HookedLayerNorm(d)  # hook: final_ln.hook_normalized
        self.head = nn.Linear(d, (m["classes"] or 10) if self.classifier else vocab)
        self.reset_parameters(layers)

    def reset_parameters(self, layers):
        """attnlab's GPT-2 style init: N(0, 0.02) matrices (not the position table, token or
        patch embedding; the patch embedding keeps nn.Linear's), zero biases, the residual
        outputs (fc2, attention.out) N(0, 0.02 / sqrt(2 layers)); LayerNorms untouched; then
        each mechanism's own init."""
        with torch.no_grad():
            if hasattr(self, "token"):
                self.token.weight.normal_(0.0, 0.02)
            for name, p in self.named_parameters():
                if "ln" in name:
                    continue
                if name.endswith("bias"):
                    p.zero_()
                elif p.dim() == 2 and not any(s in name for s in ("position", "token", "patch")):
                    out = "fc2" in name or "attention.out" in name
                    p.normal_(0.0, 0.02 / math.sqrt(2 * layers) if out else 0.02)
        for b in self.blocks:
            b.attention.reset_own_parameters()

    def forward(self, inputs, return_attention=False):
        """inputs: tokens [B, L] int64 (patches [B, S, patch_dim] float), or one sequence
        without the batch dimension. Returns logits [B, L, vocab] ([B, classes] for a
        classifier); with return_attention also the patterns, one [B, H, T, T] per layer
        (T = L, + 1 for the CLS token). Without a batch dimension both lose theirs."""
        unbatched = inputs.dim() == (2 if hasattr(self, "patch") else 1)
        if unbatched:
            inputs = inputs.unsqueeze(0)
        x = self.patch(inputs) if hasattr(self, "patch") else self.token(inputs)
        if self.classifier:
            x = torch.cat([self.cls.expand(x.shape[0], 1, x.shape[2]), x], 1)
        T = x.shape[1]
        if T > self.max_positions:
            raise ValueError(f"an input of {T} positions is longer than the model's "
                             f"{self.max_positions}")
        if self.position is not None:
            x = x + self.position[:T]
        x = self.hook_embed(F.dropout(x, self.dropout, self.training))
        patterns = []
        for b in self.blocks:
            if return_attention:
                x, pattern = b(x, return_pattern=True)
                patterns.append(pattern)
            else:
                x = b(x)
        x = self.final_ln(x)
        logits = self.head(x[:, 0]) if self.classifier else self.head(x)
        if unbatched:
            logits, patterns = logits[0], [p[0] for p in patterns]
        return (logits, patterns) if return_attention else logits

    def run_with_cache(self, inputs, names=None, detach=True):
        """(logits, {hook name: tensor}): hooks.run_with_cache; one sequence without the batch
        dimension gives tensors without it."""
        unbatched = inputs.dim() == (2 if hasattr(self, "patch") else 1)
        return run_with_cache(self, inputs, names, unbatched, detach)
