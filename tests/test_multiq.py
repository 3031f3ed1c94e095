"""The multi-question design of "Context Overloading in RAG Based Systems" (seed 004): prompts, keyword
assignment, answer parsing, scores and categories, the SQuAD documents, and a sweep through the CLI."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import re

import pytest

from components.cli import main
from components.core.documents import make_document
from components.core.scoring import is_not_specified, mostly_present, mq_category, mq_match
from components.strategies import get_strategy
from components.strategies.multiq import Answered, MQPrompt, MultiQuestion, context_chunks, parse_numbered

INSTRUCTIONS = (
    "Answer the questions as precisely as you can, in as minimum words as you can.\n"
    '**Format your answers with "A1:", "A2:", etc. at the beginning of each answer**\n'
    "**If you cannot find enough information in the provided context to answer a question, respond "
    'with "Not specified". Do NOT guess.**'
)
C1 = "Alpha Hall was built in 1901 by the mason Ada Kerr."
C2 = "The river Brell floods every spring near the mill."
Q1 = "Who built Alpha Hall?"
Q2 = "When does the river Brell flood?"


def doc2():
    return make_document([C1, C2], counts=[20, 20])


def test_mq_full_prompt_exact():
    """Figure 19's three instruction lines, then the context (contexts apart by a blank line), then the
    questions numbered Q1, Q2 (templates/mq_instructions.txt, mq_prompt.txt)."""
    (ask,) = get_strategy("mq-full").plan(doc2(), [Q1, Q2])
    assert ask.prompt.text == (f"{INSTRUCTIONS}\n\nContext:\n{C1}\n\n{C2}\n\nQuestions:\nQ1: {Q1}\nQ2: {Q2}")
    assert ask.questions == (0, 1) and ask.chunk is None
    assert [ask.prompt.text[s.start_char : s.end_char] for s in ask.prompt.spans if s.kind == "question"] == [
        Q1,
        Q2,
    ]
    assert ask.prompt.max_tokens == 32 + 2 * 24


def test_mq_chunked_prompts_exact():
    """Chunks of whole contexts within chunk_tokens (20 + 20 > 30: two chunks), each with every question."""
    plan = get_strategy("mq-chunked").plan(doc2(), [Q1, Q2], {"chunk_tokens": 30})
    questions = f"\n\nQuestions:\nQ1: {Q1}\nQ2: {Q2}"
    assert [a.prompt.text for a in plan] == [
        f"{INSTRUCTIONS}\n\nContext:\n{C1}{questions}",
        f"{INSTRUCTIONS}\n\nContext:\n{C2}{questions}",
    ]
    assert [(a.questions, a.chunk) for a in plan] == [((0, 1), 1), ((0, 1), 2)]
    whole = get_strategy("mq-chunked").plan(doc2(), [Q1, Q2])  # 40 tokens within the default 800: one chunk
    assert (
        len(whole) == 1
        and whole[0].prompt.text == get_strategy("mq-full").plan(doc2(), [Q1, Q2])[0].prompt.text
    )


def test_mq_keyword_prompts_exact():
    """Each question only with its chunk, numbered from Q1 in that chunk's prompt."""
    plan = get_strategy("mq-keyword").plan(doc2(), [Q2, Q1], {"chunk_tokens": 30})
    assert [a.prompt.text for a in plan] == [
        f"{INSTRUCTIONS}\n\nContext:\n{C1}\n\nQuestions:\nQ1: {Q1}",
        f"{INSTRUCTIONS}\n\nContext:\n{C2}\n\nQuestions:\nQ1: {Q2}",
    ]
    assert [(a.questions, a.chunk) for a in plan] == [((1,), 1), ((0,), 2)]


def test_keyword_assignment_hand_checked():
    """Keywords (lower-cased, NLTK stopwords out) shared with each chunk, the most wins, ties to the earlier:
    chunk 1 = {alpha, hall, built, 1901, mason, ada, kerr}, chunk 2 = {river, brell, floods, every, spring,
    near, mill}, chunk 3 = {mill, built, brell, 1901}.
    - "Who built Alpha Hall?" {built, alpha, hall}: 3, 0, 1 -> chunk 1
    - "Where is the mill on the Brell?" {mill, brell}: 0, 2, 2 -> tie, chunk 2
    - "What was built in 1901 at the mill?" {built, 1901, mill}: 2, 1, 3 -> chunk 3
    - "Why?" (no keyword): 0, 0, 0 -> chunk 1
    Chunk 3 has no ... it has a question; so three prompts, in chunk order."""
    doc = make_document([C1, C2, "The mill on the Brell was built in 1901."], counts=[20, 20, 20])
    questions = [Q1, "Where is the mill on the Brell?", "What was built in 1901 at the mill?", "Why?"]
    strategy = get_strategy("mq-keyword")
    assert strategy.assign(doc, questions, 20) == [0, 1, 2, 0]
    plan = strategy.plan(doc, questions, {"chunk_tokens": 20})
    assert [(a.questions, a.chunk) for a in plan] == [((0, 3), 1), ((1,), 2), ((2,), 3)]
    assert plan[0].prompt.text.endswith(f"Questions:\nQ1: {Q1}\nQ2: Why?")


def test_context_chunks_never_cut_a_context():
    doc = make_document(["a", "b", "c", "d", "e"], counts=[300, 300, 300, 900, 100])
    assert context_chunks(doc, 800) == [
        (0, 2),
        (2, 3),
        (3, 4),
        (4, 5),
    ]  # 600 | 300 (+900 passes) | 900 alone | 100
    assert context_chunks(doc, 10_000) == [(0, 5)]


def test_parse_numbered_lines():
    text = (
        "Here are the answers:\n"
        "A1: Ada Kerr\n"
        "**A2:** Not specified\n"
        "A4. in spring\n"
        "A1: a repeat, ignored\n"
        "A9: out of range\n"
        "- A5:\n"
        "  the mason\n"
        "Q6: echoed question\n"
        "A6:\n"
        'A7: "quoted"\n'
        "I hope this helps."
    )
    got = parse_numbered(text, 7)
    assert {k: v[0] for k, v in got.items()} == {
        1: "Ada Kerr",
        2: "Not specified",
        4: "in spring",
        5: "the mason",
        6: "",
        7: "quoted",
    }
    assert got[5][1] == "- A5:\nthe mason" and got[1][1] == "A1: Ada Kerr"
    assert 3 not in got and parse_numbered("", 3) == {} and parse_numbered("Ada Kerr", 1) == {}


def test_combine_interleaves_in_chunk_order():
    """mq-chunked: the first answer that is not "Not specified", in chunk order; all "Not specified": that;
    no line at all: no answer, and the error names the lines looked for."""
    p = make_document(["x"], counts=[1])
    prompt = get_strategy("mq-full").plan(p, ["q"])[0].prompt
    plan = [MQPrompt(prompt, (0, 1, 2), 1), MQPrompt(prompt, (0, 1, 2), 2)]
    texts = ["A1: Not specified\nA2: Not specified", "A1: 1901\nA2: not specified.\nA3: Not specified"]
    got = MultiQuestion.combine(plan, texts, 3)
    assert got[0] == Answered("1901", "A1: 1901", 1)
    assert got[1] == Answered("Not specified", "A2: Not specified", 0) and got[1].not_specified
    assert got[2] == Answered("Not specified", "A3: Not specified", 1)
    missing = MultiQuestion.combine(plan, ["A1: x", "A2: y"], 3)[2]
    assert missing.answer == "" and missing.error == "no A3: or A3: line in the response"
    failed = MultiQuestion.combine(plan, [None, "A3: z"], 3)  # a failed call (None) gives no answers
    assert failed[2].answer == "z" and failed[0].answer == ""


def test_mq_match_and_categories():
    """§4.2: one contains the other, raw or normalised; the categories (correct, not_specified, partial, wrong)."""
    assert mq_match("Denver Broncos", ["Denver Broncos"]) == 1.0
    assert mq_match("The Denver Broncos won.", ["Denver Broncos"]) == 1.0  # gold in answer, raw
    assert mq_match("Broncos", ["Denver Broncos"]) == 1.0  # answer in gold
    assert mq_match("the DENVER broncos!", ["Denver Broncos"]) == 1.0  # normalised only
    assert mq_match("", ["Denver Broncos"]) == 0.0 and mq_match("The", ["Denver Broncos"]) == 0.0
    assert mq_match("Carolina", ["Denver Broncos"]) == 0.0
    # Figure 17's partially correct example: 1 of the 2 gold keywords (around, 1899)
    fig17 = "Jerome Green sent his first wireless message in 1899."
    assert mostly_present(fig17, ["Around 1899"]) and mq_category(fig17, ["Around 1899"]) == "partial"
    fig18 = "Not specified (The context does not provide the number of teams participating)"
    assert is_not_specified(fig18) and mq_category(fig18, ["over 700"]) == "not_specified"
    assert mq_category("", ["over 700"]) == "not_specified"  # no answer line
    assert mq_category("about 500 teams", ["over 700"]) == "wrong"
    assert mq_category("over 700 teams", ["over 700"]) == "correct"


def test_single_question_run_reads_a1():
    """The Playground's path: one question, answered from its A1 line."""
    import asyncio

    from components.core.completion import Completion

    async def ask(prompt):
        assert "Q1: Who built Alpha Hall?" in prompt.text
        return Completion("A1: Ada Kerr", 10, 3, 0.0, "m")

    out = asyncio.run(get_strategy("mq-full").run(doc2(), Q1, None, ask))
    assert out.answer == "Ada Kerr" and out.parsed.ok


# --- SQuAD and the design ------------------------------------------------------------------------


def test_shipped_squad_is_the_official_file_and_reads_in_order():
    from components.core.resources import sample_path
    from components.tasks.importers import read_tasks
    from components.tasks.squad import multi_documents

    path = sample_path("tasks", "squad-dev-v1.1.json.gz")
    raw = gzip.decompress(path.read_bytes())
    assert (
        hashlib.sha256(raw).hexdigest() == "95aa6a52d5d6a735563366753ca50492a658031da74f301ac5238b03966972c9"
    )
    ts = read_tasks(path)
    assert len(ts.tasks) == 10_570 and not ts.errors and ts.format == "squad"
    first = json.loads(raw)["data"][0]["paragraphs"]
    (md,) = multi_documents(ts.tasks, 8, 5)
    assert len(md.tasks) == 40 and md.pages == tuple(p for p in range(1, 9) for _ in range(5))
    assert [p.text for p in md.document.pages] == [p["context"] for p in first[:8]]
    assert [t.id for t in md.tasks[:5]] == [q["id"] for q in first[0]["qas"][:5]]
    two = multi_documents(ts.tasks, 8, 5, 2)[1]  # the second document takes the next 8 paragraphs
    assert two.document.pages[0].text == first[8]["context"]


def test_paragraph_with_fewer_questions_gives_fewer(tmp_path):
    from components.tasks.importers import read_tasks
    from components.tasks.squad import multi_documents

    data = {
        "version": "1.1",
        "data": [
            {
                "title": "T",
                "paragraphs": [
                    {
                        "context": "One.",
                        "qas": [
                            {"id": "a", "question": "q1?", "answers": [{"text": "One", "answer_start": 0}]}
                        ],
                    },
                    {
                        "context": "Two.",
                        "qas": [
                            {"id": f"b{i}", "question": f"q{i}?", "answers": [{"text": "Two"}]}
                            for i in range(3)
                        ],
                    },
                ],
            }
        ],
    }
    path = tmp_path / "mini.json"
    path.write_text(json.dumps(data))
    (md,) = multi_documents(read_tasks(path).tasks, 2, 2)
    assert [t.id for t in md.tasks] == ["a", "b0", "b1"] and md.pages == (1, 2, 2)
    with pytest.raises(ValueError, match="need 4 paragraphs; the task file has 2"):
        multi_documents(read_tasks(path).tasks, 2, 2, 2)


CONFIG = """[sweep]
name = "{name}"
tasks = "squad-dev"
design = "multi-question"
contexts = [8]
questions_per_context = [5]
strategies = ["mq-full", "mq-chunked", "mq-keyword"]
{extra}
[[sweep.models]]
provider = "openai-compatible"
model = "loop-model"
base_url = "{url}"
"""


def write_config(tmp_path, url, name="mq", extra="params = { chunk_tokens = 300 }"):
    path = tmp_path / f"{name}.toml"
    path.write_text(CONFIG.format(name=name, url=url, extra=extra))
    return path


@pytest.mark.parametrize(
    "extra, message",
    [
        ("lengths = [1000]", "takes contexts (K) and questions_per_context (Q), not lengths"),
        ('mode = "batch"', "runs live"),
        ("n = 0", "n (documents for each K) must be a positive whole number"),
    ],
)
def test_config_errors_are_one_line(tmp_path, capsys, extra, message):
    assert (
        main(
            [
                "sweep",
                str(write_config(tmp_path, "http://127.0.0.1:9/v1", extra=extra)),
                "--dry-run",
                "--db",
                str(tmp_path / "x.sqlite"),
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_config_round_trips_and_refuses_other_strategies():
    from components.run.config import SweepConfig

    d = {
        "sweep": {
            "name": "m",
            "tasks": "squad-dev",
            "design": "multi-question",
            "contexts": [8, 16],
            "questions_per_context": [5],
            "strategies": ["mq-full"],
            "models": [{"provider": "fake", "model": "f"}],
        }
    }
    cfg = SweepConfig.from_dict(d)
    assert (cfg.contexts, cfg.questions_per_context, cfg.n) == ((8, 16), (5,), 1)
    assert cfg.tasks_path.name == "squad-dev-v1.1.json.gz"
    assert cfg.to_dict()["tasks"] == "squad-dev-v1.1.json.gz"  # a shipped file is stored by its bare name
    assert SweepConfig.from_stored(cfg.to_dict()).to_dict() == cfg.to_dict()
    d["sweep"]["strategies"] = ["baseline"]
    with pytest.raises(ValueError, match="its strategies are mq-full, mq-chunked, mq-keyword; not baseline"):
        SweepConfig.from_dict(d)


def scripted(prompts: list[str]):
    """The loopback model's answers: for each `Qn: question` line, the gold answer when the prompt's context
    holds it (in a sentence when its length is a multiple of 5; the line of "Santa Clara, California" left
    out), else "Not specified"."""
    from components.core.resources import sample_path
    from components.tasks.importers import read_tasks

    gold = {
        t.question: t.answers[0]
        for t in read_tasks(sample_path("tasks", "squad-dev-v1.1.json.gz")).tasks[:400]
    }

    def answer(prompt: str, middle_loss: float = 0.0) -> str:
        prompts.append(prompt)
        context = prompt.split("\nContext:\n", 1)[1].split("\n\nQuestions:\n", 1)[0]
        lines = ["Sure, here are the answers."]
        for number, question in re.findall(r"^Q(\d+): (.*)$", prompt, re.M):
            g = gold.get(question) or gold[question + " "]
            if g not in context:
                lines.append(f"A{number}: Not specified")
            elif g == "Santa Clara, California":
                continue  # a missing line
            else:
                lines.append(f"A{number}: " + (f"It was {g}." if len(g) % 5 == 0 else g))
        return "\n".join(lines)

    return answer


def test_multi_question_sweep_through_the_cli(tmp_path, server, capsys, monkeypatch):
    """The acceptance check: K = 8, Q = 5 against an OpenAI-compatible server gives 40 trials per strategy
    with categories, all 40 questions in the mq-full prompt, each answer parsed back to its own trial; the
    calls' counts are held by each prompt's first question, so the trials' totals are what was sent."""
    import tests.support.llm_server as llm_server

    prompts: list[str] = []
    monkeypatch.setattr(llm_server, "plausible_answer", scripted(prompts))
    toml, db = write_config(tmp_path, server.openai_url), tmp_path / "r.sqlite"
    assert main(["sweep", str(toml), "--dry-run", "--db", str(db)]) == 0
    dry = capsys.readouterr().out
    assert "design multi-question" in dry and "trials:        120" in dry and server.counts["total"] == 0
    to_send = int(re.search(r"calls: +(\d+) to send", dry).group(1))
    assert main(["sweep", str(toml), "--db", str(db), "--quiet"]) == 0
    capsys.readouterr()
    assert server.counts["chat"] == len(prompts) == to_send  # the dry run counted the calls exactly

    full = [p for p in prompts if "Q40: " in p and "Q41: " not in p and p.count("\n\n") >= 9]
    assert len(full) >= 1 and all(f"\nQ{i}: " in full[0] for i in range(1, 41))  # mq-full: every question

    from components.core.resources import sample_path
    from components.tasks.importers import read_tasks
    from components.tasks.squad import multi_documents

    tasks = read_tasks(sample_path("tasks", "squad-dev-v1.1.json.gz")).tasks
    santa_clara = {t.id for t in tasks[:400] if t.answers[0] == "Santa Clara, California"}
    (md,) = multi_documents(
        tasks, 8, 5
    )  # the questions §4.4's heuristic sends to a chunk without their paragraph
    chosen = get_strategy("mq-keyword").assign(md.document, [t.question for t in md.tasks], 300)
    ranges = context_chunks(md.document, 300)
    texts = ["\n\n".join(p.text for p in md.document.pages[a:b]) for a, b in ranges]
    sent_elsewhere = {
        t.id
        for t, page, c in zip(md.tasks, md.pages, chosen, strict=True)
        if not ranges[c][0] < page <= ranges[c][1] and t.answers[0] not in texts[c]
    }
    assert len(ranges) > 2 and 0 < len(sent_elsewhere) < 20
    assert main(["results", "--db", str(db), "--sweep", "mq", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    for name in ("mq-full", "mq-chunked", "mq-keyword"):
        mine = [r for r in rows if r["strategy"] == name]
        assert (
            len(mine) == 40
            and {r["contexts"] for r in mine} == {"8"}
            and {r["questions_per_context"] for r in mine} == {"5"}
        )
        assert sorted(int(r["question_number"]) for r in mine) == list(range(1, 41))
        assert all(
            r["category"] in ("correct", "partial", "not_specified", "wrong") and not r["error"] for r in mine
        )
        missing = [r for r in mine if r["task"] in santa_clara]
        # its line left out: no answer (mq-chunked: the other chunks' "Not specified")
        blank = "Not specified" if name == "mq-chunked" else ""
        assert missing and all(r["category"] == "not_specified" and r["answer"] == blank for r in missing)
        answered = [r for r in mine if r not in missing]
        # each trial got its own question's answer, not a neighbour's; mq-keyword sends a few questions to a
        # chunk without their paragraph (the heuristic's misses), where the model says "Not specified"
        right = [r for r in answered if r["mq_match"] == "1.0" and r["category"] == "correct"]
        misses = [r for r in answered if r not in right]
        assert all(r["answer"] == "Not specified" for r in misses), name
        assert {r["task"] for r in misses} == (
            sent_elsewhere - santa_clara if name == "mq-keyword" else set()
        ), name
    # the calls were counted once: the trials' calls add up to the prompts sent (some shared, so cached)
    from components.run.store import RunStore

    with RunStore.for_reading(db) as store:
        frame = store.trials_frame("mq")
        by = frame.groupby("strategy")["calls"].sum().to_dict()
        assert sum(by.values()) == server.counts["chat"] + int(frame["cached_calls"].sum())
        assert by["mq-full"] == 1 and by["mq-chunked"] >= 2 and by["mq-keyword"] >= 2
        full_rows = frame[frame.strategy == "mq-full"]
        assert full_rows[full_rows.question_number == 1]["calls"].item() == 1
        assert (full_rows[full_rows.question_number > 1]["calls"] == 0).all()
        assert (
            len(store.calls_for_trial(int(full_rows.iloc[5]["trial_id"]))) == 1
        )  # linked to its shared call
    sent = server.counts["total"]
    assert main(["sweep", str(toml), "--db", str(db), "--quiet"]) == 0  # resumed: nothing left to run
    assert server.counts["total"] == sent
    assert main(["sweep", str(toml), "--dry-run", "--db", str(db)]) == 0
    assert "calls:         0 to send" in capsys.readouterr().out


def test_published_004_rows():
    from components.report.published_004 import load_published_004

    df = load_published_004()
    got = {(r.strategy, r.contexts, r.metric): r.value for r in df.itertuples()}
    assert got[("mq-full", 8, "incorrect")] == 9 and got[("mq-keyword", 8, "incorrect")] == 4
    assert got[("mq-keyword", 8, "partially_correct")] == 2
    assert got[("mq-full", 16, "incorrect")] == 25 and got[("mq-keyword", 16, "incorrect")] == 9
    assert set(df.prompt_tokens[df.contexts == 8]) == {1587} and set(df.prompt_tokens[df.contexts == 16]) == {
        2256
    }


def test_same_prompt_of_three_strategies_is_sent_once(tmp_path, server, capsys, monkeypatch):
    """At K = 8 the development set's paragraphs (about 760 tokens) fit one 800-token chunk: the three
    strategies send the same prompt, once; the dry run says so (1 to send, 2 cached) and the run agrees."""
    import tests.support.llm_server as llm_server

    prompts: list[str] = []
    monkeypatch.setattr(llm_server, "plausible_answer", scripted(prompts))
    toml, db = write_config(tmp_path, server.openai_url, name="one", extra=""), tmp_path / "one.sqlite"
    assert main(["sweep", str(toml), "--dry-run", "--db", str(db)]) == 0
    assert "calls:         1 to send; 2 already cached in the store" in capsys.readouterr().out
    assert main(["sweep", str(toml), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "trials 120/120" in out and "calls sent 1, cached 2" in out and server.counts["chat"] == 1


# Context Overloading Figs. 17-18: its four worked examples, each in the category the paper gives it. The
# Fig. 18 text is garbled in the paper's extraction; its answers are those of SQuAD v1.1's Notre Dame article
# (training set: "21–24%" of students are children of alumni; "over 700" Bookstore Basketball teams).
PAPER_EXAMPLES = [
    ("Jerome Green sent his first wireless message in 1899.", "Around 1899", "partial"),  # Fig. 17, S7
    (
        "John Zahm's brother constructed the early wind tunnel at Notre Dame.",
        "an early wind tunnel",
        "partial",  # Fig. 17, S9: "the early" against "an early" is a mismatch
    ),
    (
        "The percentage of students at Notre Dame who are the children of former Notre Dame students was not "
        "specified.",
        "21–24%",
        "not_specified",  # Fig. 18
    ),
    (
        "Not specified (The context does not provide the number of teams participating in the Notre Dame "
        "Bookstore Basketball tournament)",
        "over 700",
        "not_specified",  # Fig. 18
    ),
]


@pytest.mark.parametrize("answer, gold, category", PAPER_EXAMPLES, ids=["S7", "S9", "fig18-1", "fig18-2"])
def test_the_papers_worked_examples_land_in_its_categories(answer, gold, category):
    from components.core.scoring import mq_category, mq_match

    assert mq_category(answer, [gold]) == category
    assert mq_match(answer, [gold]) == 0.0  # each is a mismatch (Figs. 17-18 sort mismatches)


def test_the_normalised_form_keeps_the_articles():
    from components.core.scoring import mq_match, mq_normal

    assert mq_normal("  The Early, wind-tunnel! ") == "the early windtunnel"
    assert mq_match("The early wind tunnel.", ["the early wind tunnel"]) == 1.0  # case and punctuation
    assert mq_match("early wind tunnel", ["an early wind tunnel"]) == 1.0  # the answer inside the gold
    assert mq_match("the early wind tunnel", ["an early wind tunnel"]) == 0.0


def test_keywords_keep_letters_of_every_script():
    from components.core.scoring import keywords

    assert keywords("Which river flows through Zürich?") == ["river", "flows", "zürich"]
    assert keywords("Zu\u0308rich") == ["zürich"]  # a decomposed accent stays in its word
    assert keywords("東京 and São Paulo in 1899") == ["東京", "são", "paulo", "1899"]
    assert keywords("John Zahm's brother") == ["john", "zahm's", "brother"]


def test_litm_results_json_gives_the_shipped_multi_question_runs_table(capsys):
    """`litm results --json` on the shipped multi-question run: no answer positions, so no curve, and its
    table: a row per setting and K, correct with its Wilson interval and the four categories."""
    from pathlib import Path

    db = Path(__file__).resolve().parent.parent / "sample_docs" / "runs" / "local-qwen-squad-mq.sqlite"
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    assert main(["results", "--db", str(db), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["curves"] == []
    rows = [
        (
            r["strategy"],
            r["contexts"],
            r["questions"],
            r["hits"],
            r["correct"],
            r["partial"],
            r["not_specified"],
        )
        for r in obj["multi_question"]
    ]
    assert rows == [
        ("mq-full", 8, 40, 7, 7, 0, 3),
        ("mq-chunked", 8, 40, 8, 8, 0, 13),
        ("mq-keyword", 8, 40, 16, 16, 0, 1),
        ("mq-full", 16, 80, 5, 5, 2, 30),
        ("mq-chunked", 16, 80, 11, 11, 0, 24),
        ("mq-keyword", 16, 80, 17, 17, 1, 1),
    ]
    first = obj["multi_question"][0]
    assert first["accuracy"] == 7 / 40 and 0.087 < first["lo"] < 0.088 and 0.319 < first["hi"] < 0.320
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before  # read, never written
