"""Neural KY-Attention (core/attention/ky/): window-W attention plus a learned per-head bias
g_h(t_j) over the window's slots, t_j = j / (W - 1).

Slot j of query i holds key i - first + j, with first = W - 1 for a causal window (keys
i-W+1..i) and W // 2 for a centred one. Edges "masked" leave out slots outside the sequence;
"zero-pad" keeps them as zero keys and values that still take softmax mass (logit 0 + g).

Parameters: qkv, out as dot's, and with connection "learned" the H connection networks
g_h(t) = w3 . GELU(w2 GELU(w1 t + b1) + b2) + b3, batched over heads:
connection.w1, .b1 [H, n], .w2 [H, n, n], .b2 [H, n], .w3 [H, n], .b3 [H] (n = option hidden).

Two forms compute the same function:
  "dense" (default): [B, H, L, L] scores with the band and its bias scattered in, so the hooks
          see L x L tensors like every other mechanism's;
  "unfold": the Condor seed's Pad + Unfold, [B, H, L, W] bands (O(L W) memory; what
          bench/pytorch_models.py times). Its hook_scores and hook_pattern see the bands
          [B, H, L, W]; the pattern it returns is scattered to [B, H, L, L] like attnlab's map.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..mechanisms import option_defaults
from .base import AttentionBase

KY_DEFAULTS = option_defaults("ky")  # attnlab's, from the registry's table


class ConnectionNet(nn.Module):
    """g_h(t) for the H heads at once: t [T] -> [H, T]."""

    def __init__(self, heads, hidden, xavier=False):
        super().__init__()
        self.xavier = xavier
        def param(*shape):
            return nn.Parameter(torch.empty(*shape))
        self.w1, self.b1 = param(heads, hidden), param(heads, hidden)
        self.w2, self.b2 = param(heads, hidden, hidden), param(heads, hidden)
        self.w3, self.b3 = param(heads, hidden), param(heads)
        self.reset_parameters()

    def reset_parameters(self):
        """nn.Linear's fan-in init layer by layer (1 -> n, n -> n, n -> 1), or with xavier
        Glorot-uniform weights and zero biases (option init)."""
        n = self.w2.shape[-1]
        with torch.no_grad():
            if self.xavier:
                for w, fan_in, fan_out in ((self.w1, 1, n), (self.w2, n, n), (self.w3, n, 1)):
                    bound = math.sqrt(6.0 / (fan_in + fan_out))
                    w.uniform_(-bound, bound)
                for b in (self.b1, self.b2, self.b3):
                    b.zero_()
                return
            for p in (self.w1, self.b1):
                p.uniform_(-1.0, 1.0)
            for p in (self.w2, self.b2, self.w3, self.b3):
                p.uniform_(-1.0 / math.sqrt(n), 1.0 / math.sqrt(n))

    def forward(self, t):
        x = t.to(self.w1.dtype).view(1, -1, 1)
        h1 = F.gelu(x * self.w1.unsqueeze(1) + self.b1.unsqueeze(1))
        h2 = F.gelu(h1 @ self.w2.transpose(1, 2) + self.b2.unsqueeze(1))
        return (h2 * self.w3.unsqueeze(1)).sum(-1) + self.b3.unsqueeze(1)


class KyAttention(AttentionBase):
    def __init__(self, spec, impl="dense"):
        super().__init__(spec)
        o = dict(KY_DEFAULTS, **spec.options)
        if spec.causal and o["placement"] != "causal":
            raise ValueError("ky: a centred window in a causal model lets a position see the "
                             "token it predicts (attnlab refuses it)")
        if impl not in ("dense", "unfold"):
            raise ValueError(f"ky: impl {impl!r} is not dense or unfold")
        self.impl, self.w, self.masked_edges = impl, o["window"], o["edges"] == "masked"
        self.first = self.w - 1 if o["placement"] == "causal" else self.w // 2
        self.qkv = nn.Linear(spec.d_model, 3 * spec.d_model)
        self.out = nn.Linear(spec.d_model, spec.d_model)
        if o["connection"] == "learned":
            self.connection = ConnectionNet(spec.heads, o["hidden"], o["init"] == "xavier")
        else:
            self.connection = None

    def reset_own_parameters(self):
        if self.connection is not None:
            self.connection.reset_parameters()

    def bias_table(self):
        """What the logits get per head and slot, [H, W]: g_h(t_j) (zeros without a connection)
        and with ALiBi -m_h |first - j| (KyAttention::logit_bias_table)."""
        w = self.qkv.weight
        if self.connection is None:
            table = w.new_zeros(self.heads, self.w)
        else:
            t = torch.linspace(0.0, 1.0, self.w, dtype=w.dtype, device=w.device)  # t_j, j < W
            table = self.connection(t)
        slopes = self.position.slopes(table)
        if slopes is not None:
            distance = (float(self.first) - torch.arange(self.w, dtype=table.dtype,
                                                         device=table.device)).abs()
            table = table - slopes.view(-1, 1) * distance.unsqueeze(0)
        return table

    def slot_keys(self, L, device):
        """[L, W]: the key index slot j of query i holds (may fall outside 0..L-1)."""
        i = torch.arange(L, device=device).view(-1, 1)
        return i - self.first + torch.arange(self.w, device=device)

    def forward(self, x, return_pattern=False):
        B, L, _ = x.shape
        q, k, v = self.split_qkv(self.qkv(x))
        q, k = self.position.rotate(q, k)
        g = self.bias_table().to(x.dtype)
        key = self.slot_keys(L, x.device)
        outside = (key < 0) | (key >= L)
        scale = math.sqrt(self.head_dim)
        if self.impl == "dense":
            i = torch.arange(L, device=x.device)
            slot = i.view(1, -1) - i.view(-1, 1) + self.first  # [L, L]: key j's slot for query i
            band = g[:, slot.clamp(0, self.w - 1)].masked_fill(~((slot >= 0) & (slot < self.w)),
                                                                float("-inf"))
            scores = q @ k.transpose(-2, -1) / scale + band
            if self.masked_edges:
                z, pattern = self.attend(scores, v)
            else:
                # Zero-pad slots are keys of zeros: logit 0 + g, no value. They share the
                # softmax's mass but are no key of the map (attnlab's band_to_dense drops them).
                pad = g.unsqueeze(1).expand(-1, L, -1).masked_fill(~outside, float("-inf"))
                full = torch.cat([self.hook_scores(scores), pad.expand(B, -1, -1, -1)], -1)
                pattern = self.hook_pattern(full.softmax(-1)[..., :L])
                weights = F.dropout(pattern, self.dropout, self.training)
                z = self.hook_z(weights @ v)
        else:
            pad = (0, 0, self.first, self.w - 1 - self.first)
            ku = F.pad(k, pad).unfold(2, self.w, 1)  # [B, H, L, Dh, W]
            vu = F.pad(v, pad).unfold(2, self.w, 1)
            scores = (q.unsqueeze(-2) @ ku).squeeze(-2) / scale + g.view(1, self.heads, 1, self.w)
            if self.masked_edges:
                scores = scores.masked_fill(outside, float("-inf"))
            band = self.hook_pattern(self.hook_scores(scores).softmax(-1))  # [B, H, L, W]
            weights = F.dropout(band, self.dropout, self.training)
            z = self.hook_z((weights.unsqueeze(-2) @ vu.transpose(-1, -2)).squeeze(-2))
            pattern = self.band_to_dense(band, key, outside) if return_pattern else None
        y = self.out(self.merge(z))
        return (y, pattern) if return_pattern else y

    @staticmethod
    def band_to_dense(band, key, outside):
        """Band weights [B, H, L, W] as [B, H, L, L] (zero outside the window and for zero-pad
        slots, which point at no key), as attnlab's band_to_dense."""
        B, H, L, W = band.shape
        index = key.clamp(0, L - 1).expand(B, H, L, W)
        return band.new_zeros(B, H, L, L).scatter_add(-1, index, band.masked_fill(outside, 0.0))
