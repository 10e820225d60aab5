"""Load an attnlab run, plot one head's pattern, zero-ablate that head and print the loss change.
usage: PYTHONPATH=python python3 tests/python/example.py RUN_DIR   (docs/guide/python.md)"""
import sys

import attnlab

run = attnlab.load(sys.argv[1])
logits, maps = run.model(run.probe, return_attention=True)  # maps[layer]: [heads, L, L]
try:
    import matplotlib.pyplot as plt
    plt.imshow(maps[0][1].detach().numpy()), plt.title("layer 0, head 1"), plt.savefig("head.png")
except ImportError:
    print("(no matplotlib: no plot)")


def ablate(z, hook):  # z [batch, heads, L, Dh]: each head's output, before the projection
    z = z.clone()
    z[:, 1] = 0
    return z


with attnlab.hooks(run.model, {"block0.attention.hook_z": ablate}):
    ablated = run.evaluate()["eval_loss"]
print(f"eval loss {run.evaluate()['eval_loss']:.4f} -> {ablated:.4f} without layer 0 head 1")
