"""The Lesson: nine short steps through the lost-in-the-middle effect and its remedies, as data.

Each step has two or three sentences, one live widget (named here, drawn by webapp/lesson/widgets.py),
a "try this", a question for the room, and a link into another page with its settings filled in
(query parameters read by webapp/session/url.py). Text follows the papers; the section each step rests
on is in `source` (and in the comment above it).
  LITM = Liu et al. 2023, "Lost in the Middle: How Language Models Use Long Contexts"; R&R = Agrawal
  et al. 2024, "Can't Remember Details in Long Documents? You Need Some R&R"; Found in the Middle = Hsieh
  et al. 2024, "Found in the Middle: Calibrating Positional Attention Bias Improves Long Context
  Utilization" (arXiv 2406.16008).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from components.report.promptmap import word
from components.tasks.samples import NQ_SET


@dataclass(frozen=True)
class Link:
    page: str  # url path of a page: playground | results | papers | experiments
    label: str
    query: dict = field(default_factory=dict)
    run: str = ""  # a shipped run (its store's name) the page opens on, as ?sweep= (the app finds its key)


@dataclass(frozen=True)
class Step:
    key: str
    title: str
    text: str
    widget: str
    try_this: str
    question: str
    link: Link
    source: str


STEPS: tuple[Step, ...] = (
    # LITM §1, §3.3 and Fig. 1/5; Tables 5-7 (the values drawn), Table 1 (closed-book 56.1%).
    Step(
        "effect",
        "The effect in the papers",
        "Liu et al. gave models 10, 20 or 30 search results with the answer in one of them, and moved that "
        "one document from first to last. Accuracy is highest when the answer is at the very beginning or "
        "the very end, and lowest in the middle: a U. For GPT-3.5-Turbo, the middle of 20 documents scores "
        "below answering with no documents at all (closed-book, 56.1%).",
        "published_litm",
        "Hover over the lowest point of each line: where in the list is it?",
        "Why might a model read the start and the end of its prompt better than the middle?",
        Link("papers", "See every published table on the Papers page"),
        "LITM §3.3, Fig. 5, Tables 1 and 5-7",
    ),
    # R&R §3.1 and App. A: the baseline prompt (instructions, pages, instructions again).
    Step(
        "prompt",
        "See it in one prompt",
        "A prompt is a long line of tokens. The instructions sit at the two ends; the document's pages fill "
        f"the middle, and the page holding the answer (the gold page, {word('gold')} star) is somewhere in between. "
        "The lower panel shows how far each page is from the nearest instruction.",
        "one_prompt",
        "Find the gold page: how many tokens separate it from the nearest instruction?",
        "If the model's attention fades with distance from the instructions, which pages are at risk?",
        Link(
            "playground", "Open this prompt in the Playground", {"source": "sample", "strategy": "baseline"}
        ),
        "R&R §3.1, App. A",
    ),
    # LITM §2.1-2.2: N documents, the gold one at index i, distractors in their given order.
    Step(
        "move",
        "Move the answer",
        "Here is one real NQ-open question with 20 documents: the gold passage and 19 distractors. The "
        "slider moves the gold document from index 0 (first) to 19 (last), exactly as a sweep builds it; "
        "everything else stays in place.",
        "move",
        f"Move the slider from 0 to 19 and watch the {word('gold')} star travel; then open Accuracy and Likelihood: "
        "where does the answer do worst?",
        "The words are the same at every position. What changed for the model?",
        Link(
            "playground",
            "Move it in the Playground and run 5 positions",
            {"source": "task", "set": NQ_SET, "documents": 20, "gold": 9, "strategy": "litm"},
        ),
        "LITM §2.1-2.2",
    ),
    # Found in the Middle §2 (and its abstract): models show a U-shaped positional attention bias, the
    # first and last documents of the input attended more whatever their relevance, tied to the lost middle;
    # measured here as the gold page's share of the last prompt token's attention (providers/attention.py).
    Step(
        "why",
        "Why the middle is lost",
        "Found in the Middle (2024) looked inside the model: the first and last documents get more of its "
        "attention whatever they hold, the middle ones less, a U-shaped positional attention bias. Here is "
        "that measure on this app's bundled model, beside its accuracy: the gold document's share of the "
        "attention of the prompt's last token.",
        "why",
        "Does the attention dip where the accuracy dips? Then look at one prompt, live.",
        "If the model looks less at the middle whatever is there, what could we change?",
        Link("papers", "Found in the Middle on the Papers page"),
        "Found in the Middle §2",
    ),
    # R&R §3.2: an INSTRUCTIONS_REMINDER block about every r tokens, between pages; §5.2 Table 5 (r).
    Step(
        "reminders",
        "Reminders (reprompting)",
        "Reprompting repeats the instructions as a reminder block about every r tokens, always between "
        "pages, so no page is far from a copy of the task. The paper found r = 10k tokens best at 40k-token "
        "documents, and the reminders cost few extra input tokens.",
        "reminders",
        f"Lower r and count the {word('reminder')} reminders; watch the distance panel flatten.",
        "Reminders shorten the distance to the instructions. Is distance the whole story?",
        Link(
            "playground",
            "Try reprompting in the Playground",
            {"source": "sample", "strategy": "reprompt", "r": 500},
        ),
        "R&R §3.2, §5.2 Table 5",
    ),
    # R&R §3.3: ICR phase 1 retrieves up to k page numbers, phase 2 answers from only those pages.
    Step(
        "icr",
        "Retrieval first (ICR)",
        "In-context retrieval asks twice. First: list up to k page numbers relevant to the question. Then: "
        "answer from only those pages, a short prompt the model handles well. Picking pages is easier than "
        "answering, because recall matters more than precision.",
        "icr",
        "Change k: how many tokens would stage 2 read instead of the whole document?",
        "A weak model answers 'Pages: 1, 2, 3' to every question. How would you spot that in the results?",
        Link("playground", "Run ICR in the Playground", {"source": "sample", "strategy": "icr", "k": 3}),
        "R&R §3.3",
    ),
    # R&R §3.3 (R&R = ICR with reminders in phase 1), §5.1 and App. B Table 7 (NQ by position).
    Step(
        "rr",
        "R&R: reminders plus retrieval",
        "R&R puts the reminders into the retrieval prompt, so pages buried in the middle still get picked; "
        "the answer prompt is short and needs none. On NQ with GPT-4 Turbo at 80k tokens, the baseline falls "
        "to 36% with the answer 10k tokens in; R&R holds 62% there.",
        "rr",
        "Compare the three lines between 10k and 40k tokens, away from both ends.",
        "R&R costs two calls instead of one. When is the second call worth it?",
        Link(
            "playground",
            "Open R&R in the Playground",
            {"source": "sample", "strategy": "rr", "r": 500, "k": 3},
        ),
        "R&R §3.3, §5.1, App. B Table 7",
    ),
    # R&R §3.4: chunks of about c tokens, one retrieval call each, then one answer call (m = chunks + 1);
    # Tables 2-3 (accuracy and cost by c).
    Step(
        "chunking",
        "Chunking, and what it costs",
        "Chunked ICR cuts the document into chunks of about c tokens, asks for pages in each chunk, pools "
        "them and answers once: m = chunks + 1 calls. Smaller chunks are easier to read but cost more calls "
        "and output tokens; reminders inside chunks soften the loss at larger c.",
        "chunking",
        "Read the calls m under each chunk size: where does accuracy stop paying for them?",
        "Output tokens cost three times input tokens on GPT-4 Turbo. Which chunk size would you pay for?",
        Link(
            "playground", "Chunk a document in the Playground", {"source": "sample", "strategy": "chunked-rr"}
        ),
        "R&R §3.4, §5.1 Tables 2-3",
    ),
    # R&R §6 (conclusion) and LITM §3.3 / §4.3: what to choose, measured on your own model.
    Step(
        "choose",
        "What to choose",
        "Start with the cheapest prompt that works: one call with the answer near an edge. If answers in the "
        "middle get lost, add reminders (nearly free), then retrieval (two calls), then chunks (many calls). "
        "Measure on your own model and documents: a small model behaves differently from the papers' models.",
        "choose",
        "Compare the calls and tokens each strategy spends on this 20-document prompt.",
        "For your use, which costs more: a wrong answer, or a few extra calls?",
        Link(
            "results",
            "See real curves on the Results page",
            {"axis": "gold_index"},
            run="local-qwen-nq-litm20",
        ),
        "R&R §6; LITM §3.3",
    ),
)


def step(number: int) -> Step:
    """The step numbered from 1 (clamped to the steps there are)."""
    return STEPS[min(max(1, int(number)), len(STEPS)) - 1]
