"""attnlab's tasks as far as a loaded run needs them: the vocabulary and sequence length (which
fix the model's shapes), the fixed eval set and the probe, each rebuilt exactly as attnlab
builds them (core/data/), so that ``Run.evaluate()`` reproduces attnlab's eval loss.

Training batches are not replicated: attnlab derives them from per-step seeds; a PyTorch
continuation of a run draws its own.
"""
from . import benchmark
from .fashion_mnist import FashionMnistTask
from .rng import StdRng, mix_seed
from .synthetic import InductionTask, ModAddTask, RecallTask, TransformTask, to_batch
from .text import TextTask

__all__ = ["make_task", "StdRng", "mix_seed", "to_batch", "TransformTask", "RecallTask",
           "ModAddTask", "InductionTask", "TextTask", "FashionMnistTask", "benchmark"]

TASKS = {"copy": TransformTask, "reverse": TransformTask, "sort": TransformTask,
         "recall": RecallTask, "modadd": ModAddTask, "induction": InductionTask,
         "text": TextTask, "fashion-mnist": FashionMnistTask, **benchmark.TASKS}


def make_task(config):
    """The task of a resolved config (core/data/tasks.cpp's make_task)."""
    t = config["task"]
    if t["name"] not in TASKS:
        raise ValueError(f"task.name: unknown task {t['name']!r} (known: {', '.join(TASKS)})")
    return TASKS[t["name"]](t, config["seed"], config["train"]["eval_batches"],
                            config["train"]["batch_size"])
