import asyncio

import pytest

from components.core.completion import Completion
from components.core.documents import make_document
from components.core.tokens import tokenizer
from components.strategies import get_strategy

Q = "Who wrote Hamlet?"
CONTEXT = "Macbeth is a tragedy.\n\nHamlet was written by William Shakespeare.\n\nOthello is set in Venice."


@pytest.fixture
def doc():
    return make_document(
        ["Macbeth is a tragedy.", "Hamlet was written by William Shakespeare.", "Othello is set in Venice."],
        gold=[2],
    )


def fake(*replies):
    queue = list(replies)
    seen = []

    async def ask(prompt):
        seen.append(prompt)
        return Completion(queue.pop(0), prompt.tokens, 5, 0.1)

    return ask, seen


STAGE1 = (
    "Please retrieve all the sentences in the given documents that are important and relevant to answer "
    "the question.\nQuestion: Who wrote Hamlet?\nThe following are given documents.\n\n" + CONTEXT + "\n\n"
    "Please retrieve all the sentences in the given documents that are important and relevant to answer "
    "the question. The question is highlighted again at below.\nQuestion: Who wrote Hamlet?\n"
    'Retrieved sentences: (For each retrieved sentence, please start from the bullet symbol "-")'
)
STAGE2 = (
    "Please answer the question based on the given retrieved information. Only give me the answer and "
    "do not output any other words.\nQuestion: Who wrote Hamlet?\nAnswer:"
)


def test_retrieve_then_reason_stage1_exact(doc):
    p = get_strategy("retrieve-then-reason").first_prompts(doc, Q)[0]
    assert p.text == STAGE1


def test_retrieve_then_reason_stage2_continues_the_conversation(doc):
    """ALR2 Fig. 3 / Eq. 3: stage 2 is the figure's stage-2 input after stage 1's exchange, the context
    included: user [stage 1] -> assistant [retrieved sentences] -> user [answer ask]."""
    retrieved = "- Hamlet was written by William Shakespeare.\n- Othello is set in Venice."
    ask, seen = fake(retrieved, "William Shakespeare")
    out = asyncio.run(get_strategy("retrieve-then-reason").run(doc, Q, None, ask))
    assert seen[0].messages == [{"role": "user", "content": STAGE1}]
    assert seen[1].stage == 2 and seen[1].text == STAGE2
    assert seen[1].messages == [
        {"role": "user", "content": STAGE1},
        {"role": "assistant", "content": retrieved},
        {"role": "user", "content": STAGE2},
    ]
    assert [s.kind for s in seen[1].spans] == ["instruction", "question", "instruction"]
    assert seen[1].cache_cuts() == ()
    assert seen[1].to_dict()["history"][1] == {"role": "assistant", "content": retrieved}
    assert out.answer == "William Shakespeare"
    assert out.sentences == ("Hamlet was written by William Shakespeare.", "Othello is set in Venice.")
    assert out.calls == 2 and out.stage_errors == []


def test_retrieve_then_reason_without_bullets_goes_on_with_what_it_wrote(doc):
    ask, seen = fake("Hamlet was written by Shakespeare.\n", "Shakespeare")
    out = asyncio.run(get_strategy("retrieve-then-reason").run(doc, Q, None, ask))
    assert [m["content"] for m in seen[1].messages] == [STAGE1, "Hamlet was written by Shakespeare.", STAGE2]
    assert out.stage_errors and out.answer == "Shakespeare"


def test_retrieve_then_reason_with_nothing_retrieved_stops(doc):
    ask, seen = fake("  \n")
    out = asyncio.run(get_strategy("retrieve-then-reason").run(doc, Q, None, ask))
    assert len(seen) == 1 and out.answer == "" and not out.parsed.ok


def test_direct_answer_exact(doc):
    """ALR2 Fig. 4 (DA): one call; the reply is the answer."""
    strategy = get_strategy("direct-answer")
    assert (strategy.paper, strategy.stages, strategy.metric) == ("ALR2 Fig. 4", 1, "exact")
    p = strategy.first_prompts(doc, Q)[0]
    assert p.messages == [
        {
            "role": "user",
            "content": (
                "Answer the question based on the given documents. Only give me the answer and do not output any other "
                "words.\nThe following are given documents.\n\n" + CONTEXT + "\n\n"
                "Answer the question based on the given documents. Only give me the answer and do not output any other "
                "words.\nQuestion: Who wrote Hamlet?"
            ),
        }
    ]
    ask, seen = fake("William Shakespeare\n")
    out = asyncio.run(strategy.run(doc, Q, None, ask))
    assert len(seen) == 1 and out.answer == "William Shakespeare" and out.calls == 1


def test_direct_answer_is_the_text_s2a_rewrites(doc):
    """Fig. 6 wraps the direct-answer prompt of Fig. 4 as the user's text: the same words."""
    da = get_strategy("direct-answer").first_prompts(doc, Q)[0].text
    s2a = get_strategy("s2a").first_prompts(doc, Q)[0].text
    assert "\n" + da + "\n" in s2a


def test_quotes_first_exact(doc):
    p = get_strategy("quotes-first").first_prompts(doc, Q)[0]
    assert p.text == (
        "I'm going to give you some documents. Then I'm going to ask you a question about it. I'd like you to "
        "first write down exact quotes of parts of the document that would help answer the question, and then "
        "I'd like you to answer the question using facts from the quoted content. Here is the document:\n"
        "<document>\n" + CONTEXT + "\n</document>\n\n"
        "First, find the quotes from the document that are most relevant to answering the question, and then "
        'print them in numbered order. Please start the quotes with "Relevant quotes:". Then, answer the '
        'question, starting with "Answer:". Do not include or reference quoted content verbatim in the answer. '
        'Don\'t say "According to Quote [1]" when answering. After "Answer:", please only give me the answer '
        "and do not output any other words. Thus, the format of your overall response should look like what's "
        "shown between the tags. Make sure to follow the formatting and spacing exactly.\n"
        "<example>\nRelevant quotes:\n"
        '[1] "Company X reported revenue of $12 million in 2021."\n'
        '[2] "Almost 90% of revenue came from widget sales, with gadget sales making up the remaining 10%."\n\n'
        "Answer: $12 million [1].\n</example>\n\n"
        "Here is the first question: Who wrote Hamlet?\n"
        "Give me the quotes and answer for the question immediately without preamble."
    )


def test_quotes_first_run(doc):
    ask, _ = fake(
        'Relevant quotes:\n[1] "Hamlet was written by William Shakespeare."\n\nAnswer: William Shakespeare [1].'
    )
    out = asyncio.run(get_strategy("quotes-first").run(doc, Q, None, ask))
    assert out.answer == "William Shakespeare"
    assert out.sentences == ("Hamlet was written by William Shakespeare.",)


S2A_INSTR = (
    "Given the following text by a user, extract the part that is unbiased and not their opinion winthin "
    "a single paragraph, so that using that text alone would be good context for providing an unbiased "
    "answer to the question portion of the text."
)
DASHES = "-" * 22


def test_s2a_stage1_exact(doc):
    p = get_strategy("s2a").first_prompts(doc, Q)[0]
    assert p.text == (
        S2A_INSTR + "\n\n" + DASHES + " Start of Text by User " + DASHES + "\n"
        "Answer the question based on the given documents. Only give me the answer and do not output any "
        "other words.\nThe following are given documents.\n\n" + CONTEXT + "\n\n"
        "Answer the question based on the given documents. Only give me the answer and do not output any "
        "other words.\nQuestion: Who wrote Hamlet?\n"
        + DASHES
        + " End of Text by User "
        + DASHES
        + "\n\n"
        + S2A_INSTR.replace("the following text", "the above text")
        + " Please include the actual question or query that the user is asking. Separate this into "
        'two categories labeled with "Unbiased text context (includes all content except user\'s bias):" and '
        '"Question/Query (does not include user bias/preference):".'
    )


def test_s2a_stage2_is_the_rewritten_text_only(doc):
    rewritten = "Unbiased text context: Hamlet was written by Shakespeare.\nQuestion/Query: Who wrote Hamlet?"
    ask, seen = fake(rewritten + "\n", "Shakespeare")
    out = asyncio.run(get_strategy("s2a").run(doc, Q, None, ask))
    assert seen[1].text == rewritten and seen[1].stage == 2
    assert out.answer == "Shakespeare" and out.calls == 2


def test_s2a_empty_stage1_stops(doc):
    ask, seen = fake("  ")
    out = asyncio.run(get_strategy("s2a").run(doc, Q, None, ask))
    assert len(seen) == 1 and out.answer == "" and not out.parsed.ok


@pytest.mark.parametrize("name", ["retrieve-then-reason", "quotes-first", "s2a", "direct-answer"])
def test_metric_spans_and_tokens(doc, name):
    strategy = get_strategy(name)
    assert strategy.metric == "exact"
    p = strategy.first_prompts(doc, Q)[0]
    pages = [(s.kind, s.page, p.text[s.start_char : s.end_char]) for s in p.spans if s.page]
    assert pages == [
        ("page", 1, doc.page(1).text),
        ("gold", 2, doc.page(2).text),
        ("page", 3, doc.page(3).text),
    ]
    assert all(p.text[s.start_char : s.end_char] == Q for s in p.spans if s.kind == "question")
    assert p.tokens == len(tokenizer().encode(p.text))


def test_alr2_reports_rulers_metric_on_niah_tasks_and_exact_match_elsewhere(tmp_path):
    """ALR2 §4 follows RULER's setup on its NIAH tasks: a trial of an ALR2 strategy on a NIAH task has
    RULER's string_match_all as its primary metric; an R&R strategy keeps fuzzy match, and on other tasks
    ALR2 keeps exact match. The model writes the four values one per line: RULER's reading finds all
    four in the response (1.0), the parsed answer line holds one (exact match 0)."""
    from components.providers.fake import FakeProvider
    from components.run.config import SweepConfig
    from components.run.runner import run_sweep
    from components.run.store import RunStore
    from components.tasks.generators import generate
    from components.tasks.importers import write_tasks

    tasks = generate("niah-multivalue", 2, 0, paragraphs=6) + generate("facts", 2, 0)
    write_tasks(tasks, tmp_path / "t.jsonl")
    values = {t.question: t.answers for t in tasks}

    def responder(messages, settings):
        text = messages[-1]["content"] if len(messages) == 1 else messages[0]["content"]
        q = next(q for q in values if q in text)
        return "\n".join(values[q])

    (tmp_path / "s.toml").write_text(
        '[sweep]\nname = "s"\ntasks = "t.jsonl"\nlengths = [1500]\npositions = [0.5]\n'
        'strategies = ["direct-answer", "baseline"]\n[[sweep.models]]\nprovider = "fake"\nmodel = "fake"\n'
    )
    cfg = SweepConfig.from_toml(tmp_path / "s.toml")
    store = RunStore(tmp_path / "runs.sqlite")
    run_sweep(cfg, store, providers={cfg.models[0].label: FakeProvider(responder=responder)})
    f = store.trials_frame().set_index(["task", "strategy"]).sort_index()
    store.close()
    niah, facts = tasks[0].id, tasks[2].id
    assert f.loc[(niah, "direct-answer"), "metric"] == "ruler-all"
    assert (f.loc[(niah, "direct-answer"), ["ruler_all", "exact"]] == [1.0, 0.0]).all()
    assert f.loc[(niah, "baseline"), "metric"] == "fuzzy"
    assert f.loc[(facts, "direct-answer"), "metric"] == "exact"
    assert f.loc[(facts, "direct-answer"), "exact"] == 1.0


def test_a_tasks_metric_is_its_kinds_or_the_one_its_file_names():
    from components.tasks.model import Task

    assert Task("a", "q", ("1",), kind="niah-multiquery").metric == "ruler-all"
    assert Task("a", "q", ("1",), kind="qa").metric is None
    assert Task("a", "q", ("1",), kind="qa", meta={"metric": "ruler_part"}).metric == "ruler-part"
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        Task("a", "q", ("1",), meta={"metric": "nope"}).metric  # noqa: B018
