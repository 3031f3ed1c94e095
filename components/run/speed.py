"""How long a local call takes on this machine: THE estimate the Playground's clock, the sidebar, the
Experiments page and `litm sweep` all say.

One speed per model and machine, from the best of what is known:
1. the latest local calls of the user's run store (the Playground's, the Lesson's and the sweeps': every
   call answered here feeds it; a sweep goes by its own calls once it has a few): prompt tokens over
   seconds of model time, answer tokens and loads folded in;
2. else the calibration the worker timed on the first warm-up of the model here (the Playground asks
   for one in the background, `litm sweep` before it starts)
   (localworker.calibration: prompt tokens/s of a fixed text, and seconds per answer token);
3. else runs made on another machine (the shipped runs): a guess, and callers say so (`here` is False:
   the Playground's clock gives no "of about" from it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from components.core.words import count
from components.providers.base import ModelSpec

HERE = "your run store"
CALIBRATED = "a short timing when the model was first loaded"
SHIPPED = "the runs shipped with the app (made on another machine)"
MIN_TOKENS = 500  # shorter prompts measure the call's overhead more than the model's reading
RECENT_CALLS = 20  # the speed is measured over a model's latest calls: a machine's pace now, not last week's
OWN_CALLS = 3  # a sweep that has answered this many calls itself goes by its own pace alone
MIN_CALLS = 1  # one call of MIN_TOKENS or more measures the speed here: the next run's estimate follows it
ANSWER_TOKENS = 32  # what a calibrated estimate counts a call's answer as (short answers, as the tasks ask)


@dataclass(frozen=True)
class Speed:
    """A local model's speed: prompt tokens per second of model time over `n` calls or runs (answer tokens
    and load time folded in when measured from calls), or a calibration's prompt rate and `per_token`
    seconds per answer token; and where it comes from."""

    rate: float
    n: int
    where: str  # HERE, CALIBRATED or SHIPPED
    unit: str = "run"  # what n counts: "call" (every local call of the run store), "run" (trials)
    per_token: float = 0.0  # seconds per answer token (a calibration; measured rates fold it in)
    load_s: float = 0.0  # seconds the model took to load here (a calibration's)

    def seconds(self, input_tokens: int, calls: int = 1) -> float:
        """About how long `calls` calls reading `input_tokens` prompt tokens in all take."""
        return input_tokens / self.rate + calls * ANSWER_TOKENS * self.per_token

    @property
    def here(self) -> bool:
        """Measured or timed on this machine; else on the machine that made the shipped runs."""
        return self.where in (HERE, CALIBRATED)

    @property
    def calibrated(self) -> bool:
        return self.where == CALIBRATED

    def text(self) -> str:
        """'about 120 prompt tokens/s, measured over 250 calls in your run store'."""
        if self.calibrated:
            return f"about {self.rate:,.0f} prompt tokens/s and {self.per_token:.2f} s an answer token, from {self.where}"
        return f"about {self.rate:,.0f} prompt tokens/s, measured over {count(self.n, self.unit)} in {self.where}"


def from_calls(timings: list[tuple[str, int, int, float]], name: str) -> Speed | None:
    """The speed of the local model `name` (canonical) over a store's call timings (RunStore.call_timings:
    model, calls, input tokens, seconds); None below MIN_CALLS."""
    return measured(*totals(timings, name))


def totals(timings: list[tuple[str, int, int, float]], name: str) -> tuple[int, int, float]:
    """(calls, input tokens, seconds) of the local model `name` over a store's call timings."""
    calls = tokens = 0
    seconds = 0.0
    for stored, n, t, s in timings:
        if _same(stored, name):
            calls, tokens, seconds = calls + n, tokens + t, seconds + s
    return calls, tokens, seconds


def measured(calls: int, tokens: int, seconds: float) -> Speed | None:
    """The speed of `calls` answered calls here; None below MIN_CALLS."""
    if calls < MIN_CALLS or seconds <= 0:
        return None
    return Speed(tokens / seconds, calls, HERE, "call")


def calibrated(model: str) -> Speed | None:
    """The worker's calibration of the local `model` on this machine (None before its first warm-up here)."""
    from components.providers.localworker import calibration

    entry = calibration(ModelSpec("local", model))
    if entry is None:
        return None
    return Speed(
        float(entry["prompt_tps"]),
        1,
        CALIBRATED,
        "calibration",
        float(entry.get("per_token_s", 0.0)),
        float(entry.get("load_s", 0.0)),
    )


def choose(measured: Speed | None, timed: Speed | None, elsewhere: Speed | None = None) -> Speed | None:
    """THE order: measured here, else timed here, else measured on another machine."""
    return measured or timed or elsewhere


def local_speed(model: str, store=None) -> Speed | None:
    """The speed of the local `model` here, from `store`'s calls (a RunStore) then the calibration: what
    `litm sweep` says while a local call runs."""
    from components.providers.localmodel import canonical

    try:
        name = canonical(model)
    except Exception:  # a path or an unknown name: nothing measured
        return None
    measured = (
        from_calls(store.call_timings("local", MIN_TOKENS, RECENT_CALLS), name) if store is not None else None
    )
    return choose(measured, calibrated(name))


def duration(seconds: float) -> str:
    """'45 s', '3 min 20 s', '2 h 10 min'."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s" if s < 600 else f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


def wait_line(elapsed: float, expected: float | None, loading: bool = False, ahead: int = 0) -> str:
    """THE line of a local call as it waits: 'Elapsed 12 s of about 40 s', then what it waits for (the model
    loading, the calls ahead of it in the worker's queue)."""
    text = f"Elapsed {duration(elapsed)}"
    if expected:
        text += f" of about {duration(expected)}"
    if loading:
        text += "; loading the model"
    if ahead:
        text += f"; {count(ahead, 'run')} ahead of yours"
    return text


class Timer:
    """One wait on the local model, from when it was sent: its line against the estimate of the model's own
    time, to which the time spent waiting first (the model loading, calls ahead in the queue) is added."""

    def __init__(self) -> None:
        self.since = time.monotonic()
        self.waited = 0.0  # seconds before the model began on it

    def line(self, expected: float | None, loading: bool = False, ahead: int = 0) -> str:
        now = time.monotonic()
        if loading or ahead:
            self.waited = now - self.since
        return wait_line(now - self.since, self.waited + expected if expected else None, loading, ahead)


class LocalClock:
    """The calls one Caller sends the local model, as they run: every answered call feeds the speed (with the
    run store's calls it starts from), and `line()` is what `litm sweep`'s progress line says meanwhile
    ('local call: Elapsed 12 s of about 40 s', or '...; loading the model')."""

    def __init__(self, model: str, store=None):
        from components.providers.localmodel import canonical

        self.name = canonical(model)
        timings = (
            store.call_timings("local", MIN_TOKENS, RECENT_CALLS) if hasattr(store, "call_timings") else []
        )
        self.stored = totals(timings, self.name)  # (calls, prompt tokens, seconds) of the store's latest
        # (prompt tokens, seconds) of the calls this clock saw answered
        self.own: list[tuple[int, float]] = []
        self.timed: Speed | None = None
        self.running: dict[str, tuple[Timer, int]] = {}  # call key -> (its wait, its prompt tokens)

    def speed(self) -> Speed | None:
        """This run's own pace once it has OWN_CALLS answered calls (over its latest RECENT_CALLS), else
        the store's latest calls with this run's, else the calibration."""
        if len(self.own) >= OWN_CALLS:
            mine, (calls, tokens, seconds) = self.own[-RECENT_CALLS:], (0, 0, 0.0)
        else:
            mine, (calls, tokens, seconds) = self.own, self.stored
        here = measured(
            calls + len(mine), tokens + sum(t for t, _ in mine), seconds + sum(s for _, s in mine)
        )
        if here is None and self.timed is None:
            self.timed = calibrated(self.name)  # timed by a warm-up meanwhile
        return choose(here, self.timed)

    def started(self, key: str, tokens: int) -> None:
        self.running[key] = (Timer(), tokens)

    def ended(self, key: str, completion=None) -> None:
        """The call is over; an answer that took model time feeds the speed (as the store will keep it)."""
        self.running.pop(key, None)
        if completion is None or completion.cached:
            return
        if completion.input_tokens >= MIN_TOKENS and completion.latency_s > 0:
            self.own.append((completion.input_tokens, completion.latency_s))

    def line(self, loading: bool = False) -> str:
        """'' while no call runs."""
        if not self.running:
            return ""
        timer, tokens = min(self.running.values(), key=lambda t: t[0].since)
        speed = self.speed()
        return "local call: " + timer.line(speed.seconds(tokens) if speed else None, loading=loading)


def _same(stored: str, name: str) -> bool:
    from components.providers.localmodel import canonical

    try:
        return canonical(stored) == name
    except Exception:  # a path or an unknown name
        return False
