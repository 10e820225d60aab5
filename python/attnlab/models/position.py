"""Relative positions inside attention (core/attention/position/): model.position "rope" and
"alibi". "learned" is a table the model adds to the embeddings; "none" is no position at all but
the causal mask. Both of these leave attention alone.

RoPE rotates feature pairs (i, i + Dh/2) of q and k at position m by m * base^(-2i/Dh) (the
half-split pairing of GPT-NeoX and LLaMA), the angles computed in float64 as attnlab does.
ALiBi adds -m_h (i - j) to the scaled logits (-m_h |i - j| for a bidirectional model) with
Press et al.'s slopes.
"""
import torch


def rope_rotate(x, base, first=0):
    """x [..., L, Dh] rotated by position first + row (Dh even)."""
    L, Dh = x.shape[-2], x.shape[-1]
    f64 = {"dtype": torch.float64, "device": x.device}
    theta = torch.pow(base, -2.0 * torch.arange(Dh // 2, **f64) / Dh)
    angle = torch.arange(first, first + L, **f64).unsqueeze(1) * theta
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    a, b = x[..., : Dh // 2], x[..., Dh // 2:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], -1)


def alibi_slopes(heads):
    """The standard ALiBi slopes: 2^(-8h/n) for the largest power of two n <= heads, then every
    other slope of 2n for the remaining heads."""
    def power_of_two(n):
        return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]
    n = 1
    while n * 2 <= heads:
        n *= 2
    slopes = power_of_two(n)
    finer = power_of_two(2 * n)
    i = 0
    while len(slopes) < heads:
        slopes.append(finer[i])
        i += 2
    return slopes


def alibi_bias(heads, length, causal, like):
    """[H, L, L]: -m_h (i - j) (causal) or -m_h |i - j|, in like's dtype and device."""
    i = torch.arange(length, dtype=torch.float64, device=like.device)
    distance = i.unsqueeze(1) - i.unsqueeze(0)
    if not causal:
        distance = distance.abs()
    slopes = torch.tensor(alibi_slopes(heads), dtype=torch.float64, device=like.device)
    return (-slopes.view(heads, 1, 1) * distance.unsqueeze(0)).to(like.dtype)


class RelativePosition:
    """What one attention module applies for model.position (not a module: no parameters)."""

    def __init__(self, kind, heads, head_dim, causal, rope_base=10000.0):
        if kind == "rope" and head_dim % 2:
            raise ValueError(f"model.position \"rope\" needs an even head width, got {head_dim}")
        self.kind, self.heads, self.causal, self.base = kind, heads, causal, rope_base

    @property
    def rope(self):
        return self.kind == "rope"

    @property
    def alibi(self):
        return self.kind == "alibi"

    def rotate(self, q, k):
        return (rope_rotate(q, self.base), rope_rotate(k, self.base)) if self.rope else (q, k)

    def bias(self, length, like):
        """[H, L, L] logit bias (alibi) or None."""
        return alibi_bias(self.heads, length, self.causal, like) if self.alibi else None

    def slopes(self, like):
        """[H] slopes in like's dtype and device (alibi) or None."""
        if not self.alibi:
            return None
        return torch.tensor(alibi_slopes(self.heads), dtype=torch.float64).to(like)


def causal_mask(length, device):
    """[L, L] bool, True where key j > query i."""
    return torch.ones(length, length, dtype=torch.bool, device=device).triu(1)
