"""Neural Attention (core/attention/neural/): scores from a one-hidden-layer MLP per head.

Per head, with q, k, v [L, Dh] from the fused projection:
  q' = q Wq' (+ bq'),  k' = k Wk' (+ bk')       (Wq', Wk' [Dh, d']; q' = q with down "none")
  score_ij = w_a . act(U q'_i + V k'_j + b_h) + b_a          (U, V [h, d']: W_h's halves)
  out_i = sum_j softmax_j(score_ij / sqrt(Dh)) v_j           (the scale is Dh even with d')

Parameters (C = H copies, or 1 with option share_across_heads): qkv, out as dot's;
query_down, key_down [C, Dh, d'] (not with down "none"), query_down_bias, key_down_bias [C, d']
(option down_bias), hidden_query (U) and hidden_key (V) [C, h, d'], hidden_bias (b_h) [C, h],
score_weight (w_a) [C, h], score_bias (b_a) [C] (softmax is shift invariant: its gradient is 0).

Written plainly: the [B, H, L, L, h] activations are materialised (attnlab blocks the query rows
and recomputes them in backward, or runs a fused kernel: the same function).
With placement "first-layer" (the default) only layer 0 is neural: the resolved model.attention
names dot after it (the registry's rule, applied by mechanisms.resolve_layers).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..mechanisms import option_defaults
from .base import AttentionBase, fan_in_uniform_

NEURAL_DEFAULTS = option_defaults("neural")  # attnlab's, from the registry's table
ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu, "tanh": torch.tanh}  # gelu: the exact erf form


class NeuralAttention(AttentionBase):
    def __init__(self, spec):
        super().__init__(spec)
        o = dict(NEURAL_DEFAULTS, **spec.options)
        Dh = self.head_dim
        self.down = 0 if o["down"] == "none" else int(o["down"])
        if self.down > Dh:
            raise ValueError(f"neural: down {self.down} exceeds the head width {Dh}")
        if o["activation"] not in ACTIVATIONS:
            raise ValueError(f"neural: activation {o['activation']!r} is not relu, gelu or tanh")
        self.activation = ACTIVATIONS[o["activation"]]
        C, r, n = 1 if o["share_across_heads"] else self.heads, self.down or Dh, o["hidden"]
        self.qkv = nn.Linear(spec.d_model, 3 * spec.d_model)
        self.out = nn.Linear(spec.d_model, spec.d_model)
        if self.down:
            self.query_down = nn.Parameter(torch.empty(C, Dh, r))
            self.key_down = nn.Parameter(torch.empty(C, Dh, r))
            if o["down_bias"]:
                self.query_down_bias = nn.Parameter(torch.empty(C, r))
                self.key_down_bias = nn.Parameter(torch.empty(C, r))
        self.hidden_query = nn.Parameter(torch.empty(C, n, r))  # U
        self.hidden_key = nn.Parameter(torch.empty(C, n, r))    # V
        self.hidden_bias = nn.Parameter(torch.empty(C, n))      # b_h
        self.score_weight = nn.Parameter(torch.empty(C, n))     # w_a
        self.score_bias = nn.Parameter(torch.empty(C))          # b_a
        self.reset_own_parameters()

    def reset_own_parameters(self):
        """nn.Linear's fan-in init layer by layer: Dh -> d' (down), 2d' -> h (U, V, b_h),
        h -> 1 (w_a, b_a), as NeuralAttention::reset_own_parameters."""
        n, r = self.hidden_query.shape[1:]
        fan_in = {"query_down": self.head_dim, "key_down": self.head_dim,
                  "query_down_bias": self.head_dim, "key_down_bias": self.head_dim,
                  "hidden_query": 2 * r, "hidden_key": 2 * r, "hidden_bias": 2 * r,
                  "score_weight": n, "score_bias": n}
        for name, p in self.named_parameters(recurse=False):
            fan_in_uniform_(p, fan_in[name])

    def forward(self, x, return_pattern=False):
        B, L, _ = x.shape
        q, k, v = self.split_qkv(self.qkv(x))
        if self.down:  # [B, H, L, Dh] @ [C, Dh, d'] -> [B, H, L, d']
            q, k = q @ self.query_down, k @ self.key_down
            if hasattr(self, "query_down_bias"):
                q, k = q + self.query_down_bias.unsqueeze(1), k + self.key_down_bias.unsqueeze(1)
        p = q @ self.hidden_query.transpose(1, 2) + self.hidden_bias.unsqueeze(1)  # [B, H, L, h]
        r = k @ self.hidden_key.transpose(1, 2)
        a = self.activation(p.unsqueeze(3) + r.unsqueeze(2))  # [B, H, L, L, h]
        C, n = self.score_weight.shape
        s = (a @ self.score_weight.view(C, 1, n, 1)).squeeze(-1) + self.score_bias.view(C, 1, 1)
        s = s / math.sqrt(self.head_dim)
        slopes = self.position.slopes(s)
        if slopes is not None:  # ALiBi: -m_h (i - j), |i - j| when bidirectional
            i = torch.arange(L, dtype=s.dtype, device=s.device)
            distance = i.view(-1, 1) - i.view(1, -1)
            s = s - slopes.view(1, -1, 1, 1) * (distance if self.causal else distance.abs())
        if self.causal:
            s = s.masked_fill(self.causal_mask(L, s.device), float("-inf"))
        z, pattern = self.attend(s, v)
        y = self.out(self.merge(z))
        return (y, pattern) if return_pattern else y
