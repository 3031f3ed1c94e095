import pytest

from components.core.metrics import score
from components.core.scoring import (
    best_subspan_em,
    exact_match,
    fuzzy_match,
    gold_sentence_recall,
    hallucination_rate,
    normalize_answer,
    retrieval_precision,
    retrieval_recall,
)


# R&R §4.3: every unique word of the gold answer in the prediction, or vice versa, after lower-casing
# and dropping non-alphanumeric, non-space characters.
@pytest.mark.parametrize(
    "pred, answers, expected",
    [
        ("William Shakespeare", ["Shakespeare"], 1.0),  # gold words within prediction
        ("Shakespeare", ["William Shakespeare"], 1.0),  # vice versa: prediction words within gold
        ("shakespeare, william!", ["William Shakespeare"], 1.0),  # order, case and punctuation ignored
        ("It was Marlowe", ["William Shakespeare"], 0.0),
        ("1,210", ["1210"], 1.0),  # punctuation dropped inside a number
        ("the the the", ["The"], 1.0),  # unique words
        ("Paris", ["Lyon", "paris"], 1.0),  # any gold answer
        ("", ["Paris"], 0.0),
        ("Paris", [""], 0.0),
    ],
)
def test_fuzzy_match(pred, answers, expected):
    assert fuzzy_match(pred, answers) == expected


# R&R §4.3 removes non-alphanumeric characters only: letters and digits of every script stay
@pytest.mark.parametrize(
    "pred, answers, expected",
    [
        ("東京", ["東京"], 1.0),
        ("東京", ["大阪"], 0.0),  # not everything equal to nothing
        ("Wilhelm Conrad Röntgen", ["Röntgen"], 1.0),
        ("Rontgen", ["Röntgen"], 0.0),  # ö is a letter of its own, not dropped
        ("Wilhelm Conrad Ro\u0308ntgen", ["Röntgen"], 1.0),  # decomposed accent reads as composed
        ("MÜNCHEN", ["münchen"], 1.0),
        ("STRASSE", ["Straße"], 1.0),  # capitals removed (casefold)
        ("Москва!", ["москва"], 1.0),
        ("Москва", ["Киев"], 0.0),
        ("हिन्दी", ["हिन्दी भाषा"], 1.0),
        ("हिन्दी", ["हिंदू"], 0.0),  # vowel signs kept with their letters
        ("«Paris»", ["Paris"], 1.0),
        ("snake_case", ["snakecase"], 1.0),  # symbols and "_" still go
        ("٣ apples", ["٣"], 1.0),  # digits of any script
    ],
)
def test_fuzzy_match_keeps_letters_of_every_script(pred, answers, expected):
    assert fuzzy_match(pred, answers) == expected


def test_litm_score_fuzzy_keeps_non_ascii_letters(tmp_path, capsys):
    import json

    from components.cli import main

    rows = [
        {"prediction": "東京", "answers": ["東京"]},
        {"prediction": "大阪", "answers": ["東京"]},
        {"prediction": "Antoine de Saint-Exupéry", "answers": ["Saint-Exupéry"]},
        {"prediction": "Moscow", "answers": ["Москва"]},
    ]
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert main(["score", "--metric", "fuzzy", "--input", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["score"] for line in lines[:4]] == [1.0, 0.0, 1.0, 0.0]
    assert json.loads(lines[0])["prediction"] == "東京"
    assert "0.5" in lines[-1] and "4" in lines[-1]  # the summary: n = 4, mean 0.5


# Lost in the Middle: SQuAD-normalised gold is a substring of the normalised first line.
@pytest.mark.parametrize(
    "pred, answers, expected",
    [
        ("The answer is William Shakespeare.", ["william shakespeare"], 1.0),
        ("Shakespeare", ["William Shakespeare"], 0.0),  # no "vice versa" here
        ("first line\nWilliam Shakespeare", ["William Shakespeare"], 0.0),  # cut at the first newline
        # the LITM evaluation cuts at the first newline BEFORE stripping: a leading newline scores 0
        ("\n  William Shakespeare\nmore", ["William Shakespeare"], 0.0),
        ("  William Shakespeare  \nmore", ["William Shakespeare"], 1.0),
        ("anything at all", ["*"], 1.0),  # a gold answer that normalises to "" is always found (as there)
        ("", ["*"], 1.0),
        ("Paris", [], 0.0),
        ("An apple a day", ["apple"], 1.0),
        ("It's the U.S.A.", ["usa"], 1.0),
    ],
)
def test_best_subspan_em(pred, answers, expected):
    assert best_subspan_em(pred, answers) == expected


def test_normalize_answer():
    assert normalize_answer("  The Quick, brown FOX!  ") == "quick brown fox"
    assert normalize_answer("an Anchor a") == "anchor"


@pytest.mark.parametrize(
    "pred, answers, expected",
    [
        ("The Eiffel Tower.", ["eiffel tower"], 1.0),
        ("Eiffel Tower in Paris", ["eiffel tower"], 0.0),
        ("", ["x"], 0.0),
    ],
)
def test_exact_match(pred, answers, expected):
    assert exact_match(pred, answers) == expected


def test_score_dispatch_and_unknown_metric():
    assert score("fuzzy", "Shakespeare", ["William Shakespeare"]) == 1.0
    assert score("subspan-em", "Shakespeare", ["William Shakespeare"]) == 0.0
    assert score("exact", "william shakespeare", ["William Shakespeare"]) == 1.0
    with pytest.raises(
        ValueError, match="unknown answer metric 'bleu'; choose one of fuzzy, subspan-em, exact"
    ):
        score("bleu", "a", ["a"])


def test_retrieval_scores():
    assert retrieval_recall([3, 5, 9], [5, 7]) == 0.5
    assert retrieval_precision([3, 5, 9, 7], [5, 7]) == 0.5
    assert retrieval_recall([1], []) is None
    assert retrieval_precision([], [1]) is None


def test_sentence_scores():
    context = "Hamlet was written by Shakespeare. Othello is set in Venice."
    assert hallucination_rate(["Hamlet was written by Shakespeare.", "Macbeth is Scottish."], context) == 0.5
    assert hallucination_rate([], context) is None
    assert (
        gold_sentence_recall(
            ["hamlet was written by shakespeare"],
            ["Hamlet was written by Shakespeare.", "Othello is set in Venice."],
        )
        == 0.5
    )


def test_all_answers_required_for_multi_value_tasks():
    from components.core.scoring import fuzzy_match, scorer_for

    any_of, all_of = scorer_for(fuzzy_match, "any"), scorer_for(fuzzy_match, "all")
    answers = ["1234567", "7654321"]
    assert any_of("The values are 1234567.", answers) == 1.0
    assert all_of("The values are 1234567.", answers) == 0.0
    assert all_of("1234567 and 7654321", answers) == 1.0
    assert all_of("anything", []) == 0.0


# RULER (NVIDIA/RULER scripts/eval/synthetic/constants.py): string_match_all, the share of the references
# in the prediction; string_match_part, any of them; both lower-case, after evaluate.py's postprocess_pred
@pytest.mark.parametrize(
    "pred, answers, share, part",
    [
        ("1234567, 7654321, 1111111 and 2222222", ["1234567", "7654321", "1111111", "2222222"], 1.0, 1.0),
        ("1234567 and 7654321", ["1234567", "7654321", "1111111", "2222222"], 0.5, 1.0),
        ("The special magic number is 12345678", ["1234567"], 1.0, 1.0),  # contained, as RULER counts it
        ("UUID A1B2-C3", ["a1b2-c3"], 1.0, 1.0),  # case-insensitive
        ("nothing", ["1234567", "7654321", "1111111"], 0.0, 0.0),
        ("1234567", ["7654321", "1234567", "1111111"], 1 / 3, 1.0),
        ("anything", [], 0.0, 0.0),  # no reference
    ],
)
def test_ruler_string_match_all_and_part(pred, answers, share, part):
    from components.core.scoring import ruler_match_all, ruler_match_part

    assert ruler_match_all(pred, answers) == share
    assert ruler_match_part(pred, answers) == part


def test_ruler_prediction_is_postprocessed_as_rulers_evaluate_does():
    from components.core.scoring import ruler_match_all, ruler_prediction

    assert ruler_prediction("  12\t34\x0056 \n") == "12\n34\n56"
    assert ruler_match_all("12\t34", ["12\n34"]) == 1.0  # a tab is a newline to RULER
    assert ruler_match_all("12\t34", ["12 34"]) == 0.0


def test_fuzzy_match_reads_the_capital_dotted_i_as_its_lower_case():
    # casefold("İ") is "i" + U+0307 (a combining dot): the capital's dot goes with the capitalization
    assert fuzzy_match("İstanbul", ["istanbul"]) == 1.0
    assert fuzzy_match("ISTANBUL", ["İstanbul"]) == 1.0
    assert fuzzy_match("İzmir", ["istanbul"]) == 0.0
    assert fuzzy_match("ı", ["i"]) == 0.0  # the dotless ı is another letter


@pytest.mark.parametrize("pred", ["", "   ", "!!", "—", None])
def test_an_empty_prediction_scores_0_in_fuzzy_match(pred):
    """Documented in fuzzy_match: no words of the prediction are a subset of any gold answer's, but a blank
    reply is not right, so it scores 0 (the paper's "vice versa" read literally would give 1)."""
    assert fuzzy_match(pred, ["Paris"]) == 0.0
    assert fuzzy_match(pred, ["Paris", ""]) == 0.0


def test_a_bullet_of_two_context_sentences_counts_two():
    from components.core.scoring import sentence_counts

    context = ["Hamlet was written by Shakespeare. Othello is set in Venice.", "Lyon is a city."]
    assert sentence_counts(["Hamlet was written by Shakespeare. Othello is set in Venice."], context) == (
        2,
        0,
    )
    # one of the two is not in the context: one of two hallucinated, not the whole bullet
    assert sentence_counts(["Hamlet was written by Shakespeare. Macbeth is Scottish."], context) == (2, 1)
    assert (
        hallucination_rate(["Othello is set in Venice. Lyon is a city.", "Paris is big."], context) == 1 / 3
    )
