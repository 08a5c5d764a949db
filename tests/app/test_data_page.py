"""The Data page: what was read, clearing and loading the sample data again, renaming a system."""

from __future__ import annotations

from .helpers import open_page, texts


def test_clear_then_load_sample_data_again():
    at = open_page("data", clear=True)
    assert texts(at.subheader)[1:4] == ["Runs (0)", "Qrels (0)", "Per-request records (0)"]
    at.button(key="data_load_samples").click().run()
    assert texts(at.subheader)[1:4] == ["Runs (2)", "Qrels (1)", "Per-request records (4)"]


def test_data_page_describes_what_was_read(cranfield):
    qrels, runs = cranfield
    at = open_page("data")
    table = at.dataframe[0].value.set_index("system")
    for system, run in runs.items():
        assert table.loc[system, "queries"] == run.n_queries == 225
        assert table.loc[system, "rows"] == len(run)
        assert table.loc[system, "format"] == "trec"
    qrels_table = at.dataframe[1].value
    assert qrels_table.loc[0, "judgements"] == len(qrels)
    assert qrels_table.loc[0, "relevant (grade >= 1)"] == int((qrels.grades >= 1).sum())
    records_table = at.dataframe[2].value
    assert records_table["requests"].tolist() == [817, 2845, 42, 2]


def test_renaming_a_system():
    at = open_page("data")
    key = next(k for k in at.session_state["data_files"] if at.session_state["data_files"][k].system == "BM25")
    digest = key.split(":")[1]
    at.text_input(key=f"data_name_{digest[:16]}").input("Okapi BM25").run()
    assert at.dataframe[0].value["system"].tolist() == ["Okapi BM25", "BM25L"]
    at.switch_page("pages/overview.py").run()
    assert list(at.dataframe[0].value.index) == ["Okapi BM25", "BM25L"]


def test_data_page_lists_the_columns_kept_but_not_used():
    """Issue 15: a RAGAS CSV (pandas index, Python list cells) loads; its AspectCritic column is
    listed as kept but not used, its score columns as renamed."""
    from pathlib import Path

    ragas = (Path(__file__).parents[1] / "data" / "exports" / "ragas_result.csv").read_text()
    data = ragas.replace("noise_sensitivity(mode=relevant)\n", "noise_sensitivity(mode=relevant),harmfulness\n")
    data = "\n".join(line + ",0" if line[:1].isdigit() else line for line in data.splitlines()) + "\n"
    at = open_page("data", clear=True, pending=[("records", "ragas_result.csv", data.encode())])
    assert not [e.value for e in at.error]
    records_table = at.dataframe[-1].value.set_index("file")
    row = records_table.loc["ragas_result.csv"]
    assert row["kept, not used"] == "harmfulness"
    assert "factual_correctness(mode=f1) -> factual_correctness" in row["renamed columns"]
    assert row["requests"] == 3


def test_upload_boxes_say_both_the_upload_limit_and_what_save_and_share_keeps():
    import streamlit as st

    at = open_page("data")
    caption = next(c.value for c in at.caption if "can be uploaded" in c.value)
    assert f"{st.get_option('server.maxUploadSize'):,} MiB can be uploaded" in caption
    assert "Save and share keeps files of up to 300 MiB each" in caption  # LOCAL_MAX_DATASET_MB
