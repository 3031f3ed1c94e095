"""The likelihood measure in a sweep or a page: the gold answer's log-probability after a trial's prompt.

`measure` in [sweep] (run/config.py): "answer" generates and scores the answer (as always);
"likelihood" scores the gold answer without generating; "both" does the two. Scoring is teacher
forcing (components/providers/likelihood.py): the prompt a single-stage strategy sends, then the gold
answer as the assistant's reply; each gold alias is scored (one cached call each) and the trial keeps
the best: answer_logprob (natural log, summed over the alias's tokens), answer_logprob_mean (per token)
and answer_logprob_tokens. This view is ours: none of the papers report it.

Only strategies with one stage can be scored (a later stage's prompt depends on a generated reply),
and only providers that return log-probabilities of a given text (likelihood.SCORING_PROVIDERS).
"""

from __future__ import annotations

import math

from components.providers.attention import NoAttention, regions_of
from components.providers.attention import check_provider as check_attention
from components.providers.base import ProviderError
from components.providers.likelihood import CannotScore, check_provider
from components.run.caller import BudgetExceeded, Cancelled, NeedsCall
from components.strategies import get_strategy

SCORES = ("likelihood", "both")  # measures that score the gold answer
GENERATES = ("answer", "both")  # measures that generate an answer
ATTENDS = ("attention",)  # measures that read where the model looks (providers/attention.py)


def aliases(answers) -> list[str]:
    """The gold answers a likelihood trial scores, one call each: distinct, non-blank strings, in order."""
    return [a for a in dict.fromkeys(answers) if isinstance(a, str) and a.strip()]


def check_strategy(name: str, measure: str = "likelihood") -> None:
    strategy = get_strategy(name)
    if strategy.stages != 1:
        what = "scores the gold answer" if measure == "likelihood" else "reads the attention"
        raise CannotScore(
            f"strategy {name!r} has {strategy.stages} stages: the {measure} measure {what} "
            "after a single-stage prompt (litm, closed-book, oracle, baseline, reprompt...)"
        )


def check_measure(config) -> None:
    """A one-line CannotScore or NoAttention (ValueErrors) for a model or strategy the measure cannot take,
    and for a strategy that reorders by attention (attention-sort, calibrated-attention) with a model that
    gives none."""
    for name in config.strategies:
        if getattr(get_strategy(name), "needs_attention", False):
            for m in config.models:
                check_attention(m.provider)
    if config.measure == "answer":
        return
    if config.measure in ATTENDS:
        if config.mode != "live":
            raise NoAttention(
                'measure = "attention" runs live only, with the bundled local model; use mode = "live"'
            )
        for name in config.strategies:
            check_strategy(name, "attention")
        for m in config.models:
            check_attention(m.provider)
        return
    if config.mode != "live":
        raise CannotScore(
            f"measure = {config.measure!r} runs live only (the batch interfaces return no "
            'log-probabilities of a given text); use mode = "live"'
        )
    for name in config.strategies:
        check_strategy(name)
    for m in config.models:
        check_provider(m.provider, m.label)


async def score_trial(
    trial, doc, question: str, answers, strategy_name: str, params: dict, caller, on_score=None
) -> list[str]:
    """Fill the trial's likelihood columns (and add its scoring calls to its totals); returns the calls'
    keys. A provider's failure is the trial's error, as in run/trial.execute."""
    keys: list[str] = []
    golds = aliases(answers)
    try:
        check_strategy(strategy_name)
        prompts = get_strategy(strategy_name).first_prompts(doc, question, params)
        if len(prompts) != 1:
            raise CannotScore(
                f"strategy {strategy_name!r} sends {len(prompts)} prompts at once; one is scored"
            )
        if not golds:
            raise CannotScore("the task has no gold answer to score")
        best = None
        for alias in golds:
            scored, key = await caller.score(prompts[0].messages, alias)
            keys.append(key)
            trial.calls += 1
            trial.cached_calls += scored.cached
            trial.input_tokens += scored.prompt_tokens + scored.tokens
            trial.latency_s += scored.latency_s
            if on_score is not None:
                on_score(alias, scored)
            if best is None or scored.logprob > best.logprob:
                best = scored
        assert best is not None  # golds is not empty
    except (BudgetExceeded, Cancelled, NeedsCall):
        raise
    except ProviderError as exc:
        trial.error, trial.error_kind = str(exc) or exc.__class__.__name__, exc.kind
        return keys
    except CannotScore as exc:
        trial.error, trial.error_kind = str(exc), "cannot_score"
        return keys
    if not math.isfinite(best.logprob):
        trial.error, trial.error_kind = (
            f"the model gave the answer log-probability {best.logprob}",
            "bad_response",
        )
        return keys
    trial.answer_logprob = best.logprob
    trial.answer_logprob_mean = best.mean
    trial.answer_logprob_tokens = best.tokens
    return keys


async def attend_trial(trial, doc, question: str, strategy_name: str, params: dict, caller) -> list[str]:
    """Fill the trial's attention columns (one cached call: providers/attention.py) and add the call to its
    totals; returns its key. A provider's failure (a crash of the local model: local_crash) is the trial's
    error, as in run/trial.execute."""
    try:
        check_strategy(strategy_name, "attention")
        prompts = get_strategy(strategy_name).first_prompts(doc, question, params)
        if len(prompts) != 1:
            raise CannotScore(f"strategy {strategy_name!r} sends {len(prompts)} prompts at once; one is read")
        found, key = await caller.attention(prompts[0].messages, regions_of(prompts[0]))
    except (BudgetExceeded, Cancelled, NeedsCall):
        raise
    except ProviderError as exc:
        trial.error, trial.error_kind = str(exc) or exc.__class__.__name__, exc.kind
        return []
    except (CannotScore, NoAttention) as exc:
        trial.error, trial.error_kind = str(exc), "cannot_score"
        return []
    trial.calls += 1
    trial.cached_calls += found.cached
    trial.input_tokens += found.prompt_tokens
    trial.latency_s += found.latency_s
    trial.attention_pages = [float(m) for m in found.masses]
    trial.attention_other = found.other_mass
    gold = [p for p in doc.gold if p in found.pages]
    if len(gold) == 1:
        trial.attention_gold = found.mass_of(gold[0])
        trial.attention_gold_late = found.late[found.pages.index(gold[0])]
    return [key]
