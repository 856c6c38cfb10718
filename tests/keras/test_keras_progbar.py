"""fit/evaluate/predict print Keras 3's progress bar (a live bar at verbose=1 and
"auto", one line per epoch at verbose=2); before, fit always printed one plain line per
epoch. The text is read at a fake time."""

import io
import re

import numpy as np
import pytest

from gradtape import keras
from gradtape.keras import progbar

_ESCAPES = re.compile(r"\x1b\[[0-9;]*m|\x08")


class FakeClock:
    """Each call returns the next of ``times`` (then the last again)."""

    def __init__(self, *times):
        self.times = list(times)

    def time(self):
        return self.times.pop(0) if len(self.times) > 1 else self.times[0]


class Terminal(io.StringIO):
    def isatty(self):
        return True


def _plain(text):
    return _ESCAPES.sub("", text)


def test_live_bar_text_on_a_terminal():
    # Step 1 takes 3 ms; steps 2..32 take 3 ms each: 3ms/step, ETA 1843 * 3 ms = 5.5 s.
    clock = FakeClock(100.0, 100.003, 100.096)
    out = Terminal()
    bar = progbar.Progbar(1875, clock=clock.time, stream=out)
    bar.update(1, [("accuracy", 0.875), ("loss", 0.3815)])
    out.seek(0)
    out.truncate()
    bar.update(32, [("accuracy", 0.875), ("loss", 0.3815)])
    text = out.getvalue()
    # Rewritten in place: back over the previous line, then a carriage return.
    assert text.startswith("\x08") and text.lstrip("\x08").startswith("\r")
    assert _plain(text) == ("\r  32/1875 ━━━━━━━━━━━━━━━━━━━━ 5s 3ms/step - accuracy: "
                            "0.8750 - loss: 0.3815")
    assert "\x1b[1m  32/1875\x1b[0m" in text  # Keras's bold count


def test_bar_fills_and_finishes_with_the_elapsed_time():
    clock = FakeClock(0.0, 0.5, 2.5)
    out = io.StringIO()  # not a terminal: each update on a new line, as Keras
    bar = progbar.Progbar(4, clock=clock.time, stream=out)
    bar.update(1, [("loss", 2.0)])
    bar.update(4, [("loss", 1.0)])
    lines = _plain(out.getvalue()).split("\n")
    assert lines[1] == "1/4 ━━━━━━━━━━━━━━━━━━━━ 1s 500ms/step - loss: 2.0000"
    # Finalized: the value given as it is, 2 s over the 3 steps after the first.
    assert lines[2] == "4/4 ━━━━━━━━━━━━━━━━━━━━ 2s 667ms/step - loss: 1.0000"
    assert lines[3] == ""


def test_running_values_are_averaged_over_the_steps_as_keras():
    bar = progbar.Progbar(10, clock=FakeClock(0.0, 1.0, 2.0).time, stream=io.StringIO())
    bar.update(1, [("loss", 4.0)])
    bar.update(4, [("loss", 2.0)])  # weight 3: (4 + 3 * 2) / 4
    assert bar._values["loss"] == [10.0, 4]
    assert "loss: 2.5000" in bar._stream.getvalue().split("\n")[-1]


def test_one_line_form_at_verbose_2():
    clock = FakeClock(0.0, 0.002, 3.2)
    out = io.StringIO()
    bar = progbar.Progbar(1875, verbose=2, clock=clock.time, stream=out)
    bar.update(1, [("accuracy", 0.9)])
    assert out.getvalue() == ""  # nothing until the end
    bar.update(1875, [("accuracy", 0.875), ("loss", 0.00012)])
    assert out.getvalue() == ("1875/1875 - 3s - 2ms/step - accuracy: 0.8750 - "
                              "loss: 1.2000e-04\n")


@pytest.mark.parametrize("seconds, text", [(5.9, "5s"), (61, "1:01"), (3725, "1:02:05")])
def test_eta_formats(seconds, text):
    assert progbar._eta(seconds) == text


def _model():
    model = keras.Sequential([keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="mse")
    x = np.ones((4, 2), np.float32)
    y = np.array([[1.0], [1.0], [3.0], [3.0]], np.float32)  # batch losses 1 and 9
    return model, x, y


class StepClock:
    """A time that moves 0.25 s at each batch's start (a callback ticks it)."""

    def __init__(self):
        self.now = 0.0

    def time(self):
        return self.now

    def tick(self, *args, **kwargs):
        self.now += 0.25


@pytest.fixture
def clock(monkeypatch):
    fake = StepClock()
    monkeypatch.setattr(progbar, "time", fake)
    return fake


def _ticking(clock):
    return [keras.callbacks.LambdaCallback(on_train_batch_begin=clock.tick,
                                           on_test_batch_begin=clock.tick,
                                           on_predict_batch_begin=clock.tick)]


@pytest.mark.parametrize("verbose", [1, "auto"])
def test_fit_shows_the_live_bar_in_place_on_a_terminal(monkeypatch, clock, verbose):
    model, x, y = _model()
    out = Terminal()
    monkeypatch.setattr("sys.stdout", out)
    model.fit(x, y, batch_size=2, epochs=2, shuffle=False, verbose=verbose,
              validation_data=(x, y), callbacks=_ticking(clock))
    text = _plain(out.getvalue())
    epochs = text.split("Epoch 2/2\n")
    assert epochs[0].startswith("Epoch 1/2\n\r1/2 ━━━━━━━━━━")
    # The batch logs are the running means (1, then 5); the bar shows them averaged over
    # the steps until the epoch's end, which shows the epoch's logs. Validation is silent.
    # (1 * 1 + 1 * 5) / 2 = 3 at step 2. The finished line comes after validation's two
    # batches (0.5 s): Keras's time per step then counts them, (1.0 - 0.25) / 1.
    assert epochs[0] == (
        "Epoch 1/2\n"
        "\r1/2 ━━━━━━━━━━━━━━━━━━━━ 0s 250ms/step - loss: 1.0000"
        "\r2/2 ━━━━━━━━━━━━━━━━━━━━ 0s 250ms/step - loss: 3.0000"
        "\r2/2 ━━━━━━━━━━━━━━━━━━━━ 1s 750ms/step - loss: 5.0000 - val_loss: 5.0000\n")
    assert text.count("\n") == 4  # two headers, two finished bars: the rest is in place


def test_fit_verbose_2_prints_one_line_per_epoch(capsys, clock):
    model, x, y = _model()
    model.fit(x, y, batch_size=2, epochs=2, shuffle=False, verbose=2,
              callbacks=_ticking(clock))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/2"
    assert lines[1] == "2/2 - 0s - 250ms/step - loss: 5.0000"
    assert lines[2] == "Epoch 2/2" and len(lines) == 4


def test_one_epoch_has_no_header_and_verbose_0_prints_nothing(capsys, clock):
    model, x, y = _model()
    model.fit(x, y, batch_size=2, verbose=2)
    assert not capsys.readouterr().out.startswith("Epoch")
    model.fit(x, y, batch_size=2, verbose=0)
    model.evaluate(x, y, batch_size=2, verbose=0)
    model.predict(x, batch_size=2, verbose=0)
    assert capsys.readouterr().out == ""


def test_evaluate_and_predict_show_their_bars(capsys, clock):
    model, x, y = _model()
    model.evaluate(x, y, batch_size=2, callbacks=_ticking(clock))
    lines = _plain(capsys.readouterr().out).split("\n")
    assert lines[-2] == "2/2 ━━━━━━━━━━━━━━━━━━━━ 0s 250ms/step - loss: 5.0000"
    model.predict(x, batch_size=2, verbose=2, callbacks=_ticking(clock))
    assert capsys.readouterr().out == "2/2 - 0s - 250ms/step\n"
