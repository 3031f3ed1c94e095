"""A small judged run store for the Results judge audit's tests: a LITM-style sweep of 4 questions at 3
gold indices (12 trials) with `metric = "judge"`, its judge's verdicts and the string metrics. The judge
disagrees with best subspan EM on exactly DISAGREE_EM trials and with fuzzy match on DISAGREE_FUZZY, and
one question and one answer are hostile markup (the page must show them as text)."""

from __future__ import annotations

from pathlib import Path

from components.run.store import RunStore

INDEX = (0, 9, 19)
HOSTILE_QUESTION = "who wrote <script>alert(1)</script> **bold** $x$?"
HOSTILE_ANSWER = '<img src=x onerror="alert(2)"> Hamlet'
# (task, gold index) -> (answer, subspan EM, fuzzy, judge): every other trial agrees (all 1 or all 0)
ODD = {
    ("nq-0", 9): (HOSTILE_ANSWER, 0.0, 0.0, 1.0),  # a paraphrase the judge accepts: both metrics disagree
    ("nq-1", 0): ("Shakespeare, I think", 1.0, 0.0, 1.0),  # fuzzy disagrees only
    ("nq-2", 19): ("not Shakespeare", 1.0, 0.0, 0.0),  # EM disagrees only
}
DISAGREE_EM, DISAGREE_FUZZY, DISAGREE_ANY = 2, 2, 3


def judged_store(path: Path, name: str = "nq judged", judged: bool = True) -> Path:
    store = RunStore(path)
    sid = store.open_sweep(
        name,
        {
            "name": name,
            "strategies": ["litm"],
            "documents": [20],
            "gold_index": list(INDEX),
            "n_tasks": 4,
            **({"metric": "judge"} if judged else {}),
        },
    )
    for index in INDEX:
        for t in range(4):
            task = f"nq-{t}"
            hit = float(t % 2 == 0)
            answer, em, fuzzy, verdict = ODD.get(
                (task, index), ("Shakespeare" if hit else "Marlowe", hit, hit, hit)
            )
            store.put_trial(
                sid,
                {
                    "trial_key": f"{name}-{index}-{t}",
                    "task": task,
                    "question": HOSTILE_QUESTION if t == 0 else f"who wrote play {t}?",
                    "answers": ["Shakespeare", "William Shakespeare"],
                    "strategy": "litm",
                    "params": "{}",
                    "model": "local:qwen2.5-coder-0.5b-instruct",
                    "documents": 20,
                    "gold_index": index,
                    "answer": answer,
                    "raw_answer": answer,
                    "score": fuzzy,
                    "subspan_em": em,
                    "judge": verdict if judged else None,
                    "judge_reply": ("CORRECT" if verdict else "INCORRECT") if judged else None,
                    "metric": "judge" if judged else "subspan_em",
                    "calls": 2 if judged else 1,
                    "input_tokens": 100,
                    "output_tokens": 5,
                    "cost_usd": 0.0,
                    "latency_s": 0.1,
                },
            )
    store.finish_sweep(sid, "done")
    store.close()
    return path
