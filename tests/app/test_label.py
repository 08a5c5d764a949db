"""Label page: a task over the RAGTruth sample, yes/no/skip written to the store the moment they are
given (read back by a new session with the task's link), the judge's value never shown while
labelling, user text shown as text, two labellers' agreement, export and import of the labels,
and the Calibration page reading the task's labels from the store."""

from __future__ import annotations

import pandas as pd
import pytest

from evalsuite.stats import label_files
from evalsuite.storage import open_store

from .helpers import autolinks, markdown_texts, open_page, texts

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def _start(at, name="Ann", mode=None):
    if mode:
        at.radio(key="label_mode").set_value(mode)
    at.button(key="label_create").click().run()
    assert not at.exception and not at.error, texts(at.error)
    at.text_input(key="label_name_input").input(name).run()
    return at.query_params["label_task"]


def _shown_record(at) -> str:
    return next(t for t in texts(at.caption) if t.startswith("Request "))[len("Request "):]


def test_labels_go_to_the_store_at_once_and_a_new_session_continues(store_dir):
    at = open_page("label")
    task_id = _start(at)
    given = []
    for i, key in enumerate(["label_yes", "label_no", "label_skip", "label_yes", "label_yes"]):
        given.append(_shown_record(at))
        at.button(key=key).click().run()
        assert not at.exception
        with open_store(data_dir=store_dir) as store:  # written at once: another reader sees it
            labels = store.labels(task_id)
        assert len(labels) == i + 1 and labels[-1].query_id == given[-1] and labels[-1].labeller == "Ann"
    assert [lab.label for lab in labels] == [1, 0, None, 1, 1]
    assert len(set(given)) == 5  # the next record at once, never the same twice

    # A new session (another browser, or after a restart) opening the task's link: the same task,
    # the same answers, and Ann continues where she stopped.
    again = open_page("label", query={"label_task": task_id})
    assert not again.exception and not again.error, texts(again.error)
    again.text_input(key="label_name_input").input("Ann").run()
    assert any("4 of" in str(p.proto.text) and "5 answered by you" in str(p.proto.text) for p in again.get("progress"))
    assert _shown_record(again) not in given


def test_the_judges_value_is_hidden_and_user_text_is_text():
    import evalsuite as es

    records = es.read_records(open_page.__globals__["RAG"] / "ragtruth_qa.jsonl").frame
    at = open_page("label")
    _start(at)
    shown = " ".join(texts(at.markdown) + texts(at.caption) + texts(at.subheader))
    for word in ("faithfulness =", "judge says", "0.833", "verdict: "):
        assert word not in shown
    assert "hidden" in " ".join(texts(at.caption))
    query_id = _shown_record(at)
    answer = records.loc[records["query_id"] == query_id, "answer"].iloc[0]
    assert answer.split()[0] in shown
    for kind, body in markdown_texts(at):
        assert not autolinks(body), (kind, body)


def test_two_labellers_give_an_agreement_figure_and_calibration_reads_the_store():
    at = open_page("label")
    task_id = _start(at, mode="uniform random order")
    for i in range(12):
        at.button(key="label_yes" if i % 3 else "label_no").click().run()
    bob = open_page("label", query={"label_task": task_id})
    bob.text_input(key="label_name_input").input("Bob").run()
    for i in range(12):
        bob.button(key="label_yes" if i % 4 else "label_no").click().run()
    pairs = next(df.value for df in bob.dataframe if "labeller_a" in df.value.columns)
    ann = [0 if i % 3 == 0 else 1 for i in range(12)]
    bobs = [0 if i % 4 == 0 else 1 for i in range(12)]
    assert pairs.iloc[0]["n"] == 12  # the same records in the same order for both
    assert pairs.iloc[0]["kappa"] == pytest.approx(sklearn_metrics.cohen_kappa_score(ann, bobs))

    cal = open_page("calibration", query={"label_task": task_id})
    assert not cal.exception and not cal.error, texts(cal.error)
    assert "Labels from the Label page" in texts(cal.header)
    intervals = next(df.value for df in cal.dataframe if "more_labels_to_halve" in df.value.columns)
    assert set(intervals["estimator"]) == {"judge only", "human only", "PPI"}
    assert intervals["n"][intervals["estimator"] == "human only"].sum() == 12  # Ann's labels: the first given
    assert intervals[["estimate", "low", "high"]].stack().between(0, 1).all()


def test_import_writes_a_file_of_labels_and_names_a_bad_line(store_dir):
    at = open_page("label")
    task_id = _start(at)
    for _ in range(4):
        at.button(key="label_yes").click().run()
    with open_store(data_dir=store_dir) as store:
        records = [(lab.query_id, lab.system) for lab in store.labels(task_id)]
    rows = pd.DataFrame([{"query_id": q, "system": s, "human_label": "no", "labeller": "Cat"} for q, s in records])
    at.session_state["label_import_kept"] = ("cat.jsonl", label_files.to_jsonl(rows))
    at.run()
    at.button(key="label_import_go").click().run()
    assert not at.exception and not at.error, texts(at.error)
    assert "4 labels imported from cat.jsonl." in texts(at.success)
    with open_store(data_dir=store_dir) as store:
        cat = [lab for lab in store.labels(task_id) if lab.labeller == "Cat"]
    assert sorted((lab.query_id, lab.system, lab.label) for lab in cat) == sorted((q, s, 0) for q, s in records)
    pairs = next(df.value for df in at.dataframe if "labeller_a" in df.value.columns)
    assert pairs.iloc[0]["n"] == 4 and pairs.iloc[0]["agreement"] == 0.0

    bad = b"query_id,system,human_label\n" + f"{records[0][0]},{records[0][1]},1\nnope,{records[0][1]},1\n".encode()
    at.session_state["label_import_kept"] = ("bad.csv", bad)
    at.run()
    at.button(key="label_import_go").click().run()
    assert texts(at.error) == [f"bad.csv, line 3: record nope of system {records[0][1]} is not one of this task's "
                               "records"]
    with open_store(data_dir=store_dir) as store:
        assert len(store.labels(task_id)) == 8  # nothing of the bad file was written


def test_bad_link_is_a_message():
    at = open_page("label", query={"label_task": "not-a-task"})
    assert not at.exception
    assert any("cannot be opened" in t and "labelling task" in t for t in texts(at.error))
