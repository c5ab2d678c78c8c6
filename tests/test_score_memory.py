"""``rageval.evaluate``: rows in memory scored as ``rageval score`` scores them in a file (docs/score.md#in-memory),
and ``hf:`` sources that ``Dataset.save_to_disk`` wrote."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import rageval
from rageval.cli import main
from rageval.score import ScoreInputError
from rageval.score.cli import EXAMPLE, score_cmd
from rageval.score.memory import _KEYWORDS, CLI_ONLY, DEFAULT_NAME

datasets = pytest.importorskip("datasets")
pd = pytest.importorskip("pandas")

EXAMPLE_ROWS = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]

#: RAGAS-shaped rows, no ids, one without a reference (a Dataset fills it with None, a DataFrame with NaN)
RAGAS_ROWS = [
    {
        "user_input": "Who wrote Hamlet?",
        "response": "Shakespeare wrote it [1].",
        "retrieved_contexts": ["Hamlet is a tragedy by William Shakespeare.", "Macbeth is set in Scotland."],
        "reference": "William Shakespeare",
    },
    {
        "user_input": "What is the capital of France?",
        "response": "Lyon.",
        "retrieved_contexts": ["Paris is the capital of France."],
        "reference": "Paris",
    },
    {
        "user_input": "Where does the Seine flow?",
        "response": "Through Paris [1].",
        "retrieved_contexts": ["The Seine flows through Paris."],
    },
]


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def cli_score(tmp_path: Path, inputs: list[str], out: str = "cli", *extra: str) -> Path:
    res = CliRunner().invoke(main, ["score", *inputs, "--out", str(tmp_path / out), "--no-progress", *extra])
    assert res.exit_code == 0, res.output
    return tmp_path / out


def metrics_of(run_dir: Path) -> dict[tuple[str, str], dict]:
    out = {}
    for line in (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        out[(rec["setting"]["name"], rec["question_id"])] = rec["metrics"]
    return out


def scores_of(result) -> dict[tuple[str, str], dict]:
    return {(s, q): m for s, by_id in result.scores.items() for q, m in by_id.items()}


def assert_same_run(result, cli: Path) -> None:
    """Per record and in the summary (and the contrasts), the in-memory run is the command's on the file."""
    assert scores_of(result) == metrics_of(cli) == metrics_of(result.out_dir)
    if result.summary is None:  # report=False: the records alone
        return
    for name in ("summary.csv", "contrasts.csv"):
        assert (result.out_dir / name).is_file() == (cli / name).is_file()
        if (cli / name).is_file():
            assert (result.out_dir / name).read_bytes() == (cli / name).read_bytes(), name
    expected = pd.read_csv(cli / "summary.csv", na_values=["NA"], keep_default_na=False, dtype={"setting": str})
    pd.testing.assert_frame_equal(result.summary, expected.set_index("setting"))


# ---------------------------------------------------------------- the same numbers as rageval score


def test_a_dataset_of_the_example_equals_rageval_score_on_its_jsonl(tmp_path):
    f = write_jsonl(tmp_path / "example.jsonl", EXAMPLE_ROWS)
    cli = cli_score(tmp_path, [str(f)])
    result = rageval.evaluate(datasets.Dataset.from_list(EXAMPLE_ROWS), out=tmp_path / "mem")
    assert result.settings == ["baseline", "reranked"]  # the rows' systems, as in the file
    assert_same_run(result, cli)
    contrasts = result.contrasts
    assert contrasts is not None and set(contrasts["a"]) == {"reranked"} and set(contrasts["b"]) == {"baseline"}
    # keyed by the rows' own ids; answer_f1 of q1 by hand: "The Seine flows through Paris [1]." vs "Seine" /
    # "the Seine" (articles dropped): {seine, flows, through, paris} against {seine}: P 1/4, R 1, F1 0.5/1.25
    assert result.scores["baseline"]["q1"]["answer_f1"] == pytest.approx(0.4)
    assert result.records.loc[("baseline", "q1"), "answer_f1"] == pytest.approx(0.4)
    assert len(result.records) == len(EXAMPLE_ROWS)


def test_ragas_rows_as_list_dataframe_and_dataset_equal_rageval_score(tmp_path):
    f = write_jsonl(tmp_path / f"{DEFAULT_NAME}.jsonl", RAGAS_ROWS)
    cli = cli_score(tmp_path, [str(f)])
    results = [
        rageval.evaluate(RAGAS_ROWS),
        rageval.evaluate(pd.DataFrame(RAGAS_ROWS)),
        rageval.evaluate(datasets.Dataset.from_list(RAGAS_ROWS)),
        rageval.evaluate(datasets.DatasetDict({"test": datasets.Dataset.from_list(RAGAS_ROWS)}), report=False),
    ]
    assert results[-1].summary is None and results[-1].contrasts is None
    for result in results:
        assert result.settings == [DEFAULT_NAME]
        assert result.contrasts is None  # one setting: nothing to compare
        assert_same_run(result, cli)
    ids = list(results[0].scores[DEFAULT_NAME])
    assert ids == ["#1", "#2", "#3"]  # rows without ids are numbered, as in the file
    # by hand: answer_f1 of "Shakespeare wrote it" vs "William Shakespeare": P 1/3, R 1/2, F1 2·(1/6)/(5/6) = 0.4;
    # "Lyon." is not "Paris"; row 3 gives no reference: undefined (None), never 0
    by_id = results[0].scores[DEFAULT_NAME]
    assert by_id["#1"]["answer_f1"] == pytest.approx(0.4) and by_id["#2"]["answer_em"] == 0.0
    assert by_id["#3"]["answer_em"] is None and by_id["#3"]["answer_f1"] is None
    # a DataFrame made from a Dataset (list cells as numpy arrays) reads the same
    pandas_of_arrow = datasets.Dataset.from_list(RAGAS_ROWS).to_pandas()
    assert scores_of(rageval.evaluate(pandas_of_arrow, report=False)) == scores_of(results[0])


def test_named_inputs_are_compared_as_named_files(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", RAGAS_ROWS)
    better = [dict(r, response="Paris.") if r["user_input"].startswith("What is") else r for r in RAGAS_ROWS]
    b = write_jsonl(tmp_path / "b.jsonl", better)
    cli = cli_score(tmp_path, [f"old={a}", f"new={b}"])
    result = rageval.evaluate({"old": RAGAS_ROWS, "new": pd.DataFrame(better)}, out=tmp_path / "mem")
    assert result.settings == ["old", "new"]
    assert_same_run(result, cli)
    row = result.contrasts.set_index("contrast").loc["new - old: answer_em"]
    assert (row["mean_a"], row["mean_b"]) == (pytest.approx(0.5), pytest.approx(0.0))  # 1 of 2 defined vs 0 of 2


#: an ALCE result document (run.py's): its items are not rows of a layout detected alone
ALCE_DOC = {
    "args": {"use_shorter": None, "ndoc": 2, "dataset_name": "asqa"},
    "data": [
        {
            "question": "What is Paris known for?",
            "sample_id": "a1",
            "qa_pairs": [{"short_answers": ["Paris"], "question": "x"}],
            "docs": [
                {"title": "Paris", "text": "Paris is the capital of France. It has the Louvre museum."},
                {"title": "Lyon", "text": "Lyon is a large city in France."},
            ],
            "output": "Paris is the capital of France [1]. Lyon is in France [2].",
        }
    ],
}


def test_peer_documents_and_their_rows(tmp_path):
    f = tmp_path / "alce.json"
    f.write_text(json.dumps(ALCE_DOC))
    cli = cli_score(tmp_path, [f"{DEFAULT_NAME}={f}"], "cli", "--no-report")
    whole = rageval.evaluate(ALCE_DOC, report=False)  # the document as a dict: detected as its file is
    assert_same_run(whole, cli)
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps({"data": ALCE_DOC["data"]}))
    cli_rows = cli_score(tmp_path, [f"{DEFAULT_NAME}={rows}", "--format", "alce"], "cli_rows", "--no-report")
    assert_same_run(rageval.evaluate(ALCE_DOC["data"], format="alce", report=False), cli_rows)
    # by hand: ASQA's str-EM, the one short answer "Paris" is in the output: 1.0
    assert whole.scores[DEFAULT_NAME]["a1"]["str_em"] == 1.0


def test_options_are_rageval_scores_own(tmp_path):
    f = write_jsonl(tmp_path / "data.jsonl", RAGAS_ROWS)
    cli = cli_score(tmp_path, [str(f)], "cli", "--threshold", "0.8", "--diagnostics", "str_em,answer_f1")
    result = rageval.evaluate(RAGAS_ROWS, threshold=0.8, diagnostics=["str_em", "answer_f1"])
    assert_same_run(result, cli)
    assert set(result.scores[DEFAULT_NAME]["#1"]) == {"answer_em", "answer_f1", "str_em", "str_hit"}
    # every option of rageval score is a keyword of evaluate, with the command's default
    sig = inspect.signature(rageval.evaluate)
    params = {p.name: p for p in score_cmd.params}
    assert set(params) - set(CLI_ONLY) == set(_KEYWORDS.values())
    for kw, param in _KEYWORDS.items():
        default = params[param].get_default(__import__("click").Context(score_cmd))
        assert sig.parameters[kw].default == (default if param != "mapping" else ()), kw
    with pytest.raises(ScoreInputError, match=r"evaluate\(threshold=2\): the threshold must be a number in \[0, 1\]"):
        rageval.evaluate(RAGAS_ROWS, threshold=2)
    with pytest.raises(ScoreInputError, match=r"evaluate\(format='ragsa'\)"):
        rageval.evaluate(RAGAS_ROWS, format="ragsa")
    with pytest.raises(ScoreInputError, match=r"^data.jsonl line 2: .*'question'"):  # row 2 is line 2, no folder
        rageval.evaluate([{"question": "Who?", "answer": "x"}, {"answer": "x"}], report=False)
    with pytest.raises(ScoreInputError, match="row 2: expected a dict, got str"):
        rageval.evaluate([RAGAS_ROWS[0], "text"])
    with pytest.raises(ScoreInputError, match=r"has splits \['a', 'b'\]; choose one with split="):
        ds = datasets.Dataset.from_list(RAGAS_ROWS)
        rageval.evaluate(datasets.DatasetDict({"a": ds, "b": ds}))


def test_save_writes_a_run_directory_report_and_rescore_read(tmp_path):
    result = rageval.evaluate(EXAMPLE_ROWS, report=True)
    temporary = result.out_dir
    saved = result.save(tmp_path / "saved")
    assert saved == tmp_path / "saved" and temporary.is_dir()
    assert metrics_of(saved) == metrics_of(temporary)
    assert (saved / "summary.csv").read_bytes() == (temporary / "summary.csv").read_bytes()
    assert (saved / "report.html").is_file()
    stats = json.loads((saved / "run_stats.json").read_text())
    assert stats["records_reused"] == len(EXAMPLE_ROWS) and stats["records_computed"] == 0  # nothing scored again
    res = CliRunner().invoke(main, ["report", str(saved)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["rescore", str(saved)])
    assert res.exit_code == 0, res.output
    del result  # the temporary run directory goes with its result
    import gc

    gc.collect()
    assert not temporary.exists()


def test_rageval_evaluate_is_lazy_and_imports_nothing_heavy():
    code = (
        "import sys, rageval; f = rageval.evaluate; "
        "print(sorted(m for m in ('torch', 'transformers', 'evaluate', 'pandas', 'datasets') if m in sys.modules), "
        "f.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "rageval.score.memory"]


# ---------------------------------------------------------------- hf: with a save_to_disk folder


def test_hf_reads_a_save_to_disk_folder(tmp_path):
    f = write_jsonl(tmp_path / "saved.jsonl", RAGAS_ROWS)
    cli = cli_score(tmp_path, [str(f)], "cli", "--no-report")
    ds = datasets.Dataset.from_list(RAGAS_ROWS)
    ds.save_to_disk(str(tmp_path / "saved"))
    via_hf = cli_score(tmp_path, [f"hf:{tmp_path / 'saved'}"], "hf", "--no-report")
    assert metrics_of(via_hf) == metrics_of(cli)
    other = datasets.Dataset.from_list(RAGAS_ROWS[:1])
    datasets.DatasetDict({"test": ds, "other": other}).save_to_disk(str(tmp_path / "dd"))
    split = cli_score(tmp_path, [f"saved=hf:{tmp_path / 'dd'}", "--split", "test"], "split", "--no-report")
    assert metrics_of(split) == metrics_of(cli)
    res = CliRunner().invoke(main, ["score", f"hf:{tmp_path / 'dd'}", "--out", str(tmp_path / "x"), "--no-progress"])
    assert res.exit_code == 2 and "has splits ['other', 'test']; choose one with --split" in res.output
    res = CliRunner().invoke(
        main, ["score", f"hf:{tmp_path / 'saved'}", "--split", "test", "--out", str(tmp_path / "x")]
    )
    assert res.exit_code == 2 and "a saved Dataset has no splits; leave out --split test" in res.output
    (tmp_path / "empty").mkdir()
    res = CliRunner().invoke(main, ["score", f"hf:{tmp_path / 'empty'}", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2
    assert "datasets.load_dataset failed" in res.output and "Dataset.save_to_disk" in res.output
    # and evaluate takes the same source as a path
    assert metrics_of(rageval.evaluate(f"hf:{tmp_path / 'saved'}", report=False).out_dir) == metrics_of(cli)
