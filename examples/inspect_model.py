"""Read the code gradtape generates for a small model.

Three views of one two-layer MLP with a squared-error loss:

1. ``tape.inspect(loss, variables)``: the backward function a ``GradientTape`` compiles
   for the gradient of the loss (what ``tape.gradient`` runs);
2. ``@gt.function`` around the loss: the forward function it traced and compiled, and
   the backward that a tape's gradient through a call to it inlines;
3. ``@gt.function`` around a whole SGD train step: forward pass, gradient and update of
   the variables in one generated function.

The same output, for any script, comes from ``python -m gradtape inspect SCRIPT.py``.

Run: python examples/inspect_model.py
"""

from __future__ import annotations

import numpy as np

import gradtape as gt


def make_model(seed: int = 0) -> list[gt.Variable]:
    rng = np.random.default_rng(seed)
    return [gt.Variable(rng.normal(size=(3, 4)), name="w1"), gt.Variable(np.zeros(4), name="b1"),
            gt.Variable(rng.normal(size=(4, 1)), name="w2"), gt.Variable(np.zeros(1), name="b2")]


def loss_fn(variables: list[gt.Variable], x: gt.Tensor, y: gt.Tensor) -> gt.Tensor:
    w1, b1, w2, b2 = variables
    h = gt.tanh(x @ w1 + b1)
    d = h @ w2 + b2 - y
    return gt.reduce_mean(d * d)


def banner(title: str) -> None:
    print(f"\n{'=' * 8} {title} {'=' * max(4, 70 - len(title))}\n")


def main() -> dict:
    variables = make_model()
    rng = np.random.default_rng(1)
    x, y = gt.constant(rng.normal(size=(8, 3))), gt.constant(rng.normal(size=(8, 1)))

    banner("1. the backward a GradientTape compiles for d loss / d variables")
    with gt.GradientTape() as tape:
        loss = loss_fn(variables, x, y)
    tape_source = tape.inspect(loss, variables).source
    print(tape_source)

    banner("2. @gt.function loss: traced forward IR, generated forward, its backward")
    traced_loss = gt.function(lambda x, y: loss_fn(variables, x, y), name="loss")
    forward_ir = traced_loss.get_forward_ir(x, y)
    forward_source = traced_loss.get_source(x, y)
    backward_source = traced_loss.get_backward_source(x, y)
    print(forward_ir, forward_source, backward_source, sep="\n\n")

    banner("3. @gt.function train step: forward, gradient and SGD update in one function")
    optimizer = gt.optimizers.SGD(0.1)

    @gt.function
    def train_step(x, y):
        with gt.GradientTape() as tape:
            loss = loss_fn(variables, x, y)
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    before = float(train_step(x, y))
    after = float(train_step(x, y))
    step_source = train_step.get_source(x, y)
    print(step_source)
    print(f"loss before the first step {before:.4f}, before the second {after:.4f}")
    return {"tape": tape_source, "forward_ir": forward_ir, "forward": forward_source,
            "backward": backward_source, "train_step": step_source,
            "losses": (before, after)}


if __name__ == "__main__":
    main()
