"""Labelling tasks and human labels in the store, on SQLite and PostgreSQL: a label is written the
moment it is given and read back by a new Store object (a server restart), one row per record and
labeller (a second answer replaces the first), the records file is kept while a task refers to it,
bad arguments are named, and a store of schema version 2 is upgraded in place."""

from __future__ import annotations

import pytest

from evalsuite.storage import StoreError, open_store
from test_storage import RECORDS, Clock, _error, clock, raw, spec, store  # noqa: F401  (fixtures, both backends)

ALICE = "oidc:" + "a" * 32


def _task(store, **kwargs):
    data = RECORDS.read_bytes()
    digest = store.put_dataset(data, kind="records", filename="ragtruth_qa.jsonl")
    options = dict(digest=digest, filename="ragtruth_qa.jsonl", judgement="faithfulness",
                   systems=["gpt-4-0613", "llama-2-7b-chat"], mode="active", seed=7, created_by="Ann")
    options.update(kwargs)
    return store.create_label_task("RAGTruth faithfulness", **options)


def test_labels_survive_a_new_store_object_and_a_second_answer_replaces_the_first(spec, clock):
    with open_store(**spec, clock=clock) as first:
        task = _task(first, owner_id=ALICE, meta={"question": "Is every statement supported?"})
        first.put_label(task.task_id, "14300", "gpt-4-0613", labeller_id="ann", labeller="Ann", label=1)
        clock.advance(5)
        first.put_label(task.task_id, "14300", "gpt-4-0613", labeller_id="bob", labeller="Bob", label=0)
        clock.advance(5)
        first.put_label(task.task_id, "14301", "llama-2-7b-chat", labeller_id="ann", labeller="Ann", label=None)
    with open_store(**spec, clock=clock) as second:  # what a server restart sees
        again = second.label_task(task.task_id)
        assert again == task and again.meta == {"question": "Is every statement supported?"}
        assert [(lab.query_id, lab.system, lab.labeller, lab.label) for lab in second.labels(task.task_id)] == [
            ("14300", "gpt-4-0613", "Ann", 1), ("14300", "gpt-4-0613", "Bob", 0), ("14301", "llama-2-7b-chat", "Ann", None)]
        clock.advance(5)
        second.put_label(task.task_id, "14300", "gpt-4-0613", labeller_id="ann", labeller="Ann", label=False)
        ann = [lab for lab in second.labels(task.task_id) if lab.labeller_id == "ann" and lab.query_id == "14300"]
        assert len(ann) == 1 and ann[0].label == 0 and ann[0].labelled_at.timestamp() == clock.now
        assert [t.task_id for t in second.label_tasks(owner_id=ALICE)] == [task.task_id]
        assert [t.task_id for t in second.label_tasks(task_ids=[task.task_id, "not an id"])] == [task.task_id]
        assert second.label_tasks() == []
        assert second.get_dataset(task.digest) == RECORDS.read_bytes()


def test_an_import_is_one_transaction(store, raw):
    task = _task(store)
    rows = [(str(q), "gpt-4-0613", q % 2) for q in range(50)]
    store.put_labels(task.task_id, rows, labeller_id="imp", labeller="import")
    assert raw.count("evalsuite_labels") == 50
    bad = rows + [("99", "not a system", 1)]
    assert _error(store.put_labels, task.task_id, bad, labeller_id="imp", labeller="import").field == "system"
    assert raw.count("evalsuite_labels") == 50  # nothing of the bad import was written


def test_the_records_file_is_kept_while_a_task_refers_to_it(store, raw, clock):
    task = _task(store)
    clock.advance(10 * 86400)
    store.purge_expired()
    assert store.get_dataset(task.digest) == RECORDS.read_bytes()
    assert store.verify() == []


def test_bad_arguments_and_ids_are_named(store):
    task = _task(store)
    assert _error(store.label_task, "x" * 36).code in ("malformed_id", "damaged_id")
    error = _error(store.label_task, "abc")
    assert error.code == "malformed_id" and "labelling task" in str(error) and "workspace" not in str(error)
    assert _error(_task, store, mode="greedy").field == "mode"
    assert _error(_task, store, systems=["a", "a"]).field == "systems"
    assert _error(_task, store, digest="0" * 64).code == "missing_dataset"
    assert _error(store.put_label, task.task_id, "q1", "gpt-4-0613", labeller_id="ann", labeller="Ann",
                  label=2).field == "label"
    assert _error(store.put_label, task.task_id, "q\n1", "gpt-4-0613", labeller_id="ann", labeller="Ann",
                  label=1).field == "query_id"
    from evalsuite.storage import new_workspace_id

    assert _error(store.label_task, new_workspace_id()).code == "unknown_task"


def test_a_store_of_schema_version_2_gains_the_label_tables(spec, raw, clock):
    with open_store(**spec, clock=clock):
        pass
    raw.execute("DROP TABLE evalsuite_labels")
    raw.execute("DROP TABLE evalsuite_label_tasks")
    raw.execute("UPDATE evalsuite_store_meta SET value = '2' WHERE key = 'schema_version'")
    with open_store(**spec, clock=clock) as upgraded:
        task = _task(upgraded)
        upgraded.put_label(task.task_id, "1", "gpt-4-0613", labeller_id="ann", labeller="Ann", label=1)
        assert len(upgraded.labels(task.task_id)) == 1
    assert raw.rows("SELECT value FROM evalsuite_store_meta WHERE key = 'schema_version'") == [("3",)]
