"""Fuzzing the store's arguments (issue 29): every public Store method and DatasetRef called with
generated values of every shape (None, booleans, huge and negative integers, NaN and infinities,
long, control-character and non-ASCII text, bytes, deep and wide lists and dicts, objects) beside
valid ones. Each call must return or raise a StoreError; never another exception (RecursionError,
TypeError, OverflowError, sqlite3 errors), and no message may show the database's path.

EVALSUITE_STORE_FUZZ_EXAMPLES sets the generated calls per method (default 30: a seeded slice);
``python benchmarks/fuzz_round.py --only store`` runs 20,000 per method.
"""

from __future__ import annotations

import collections
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalsuite.storage import DatasetRef, StoreError, open_store

pytestmark = pytest.mark.slow  # thousands of store calls: left out of the fast loop

EXAMPLES = int(os.environ.get("EVALSUITE_STORE_FUZZ_EXAMPLES") or 30)
OUTCOMES: collections.Counter = collections.Counter()


def _deep(depth: int, kind: str):
    value: object = "x"
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


_TEXT = st.one_of(st.text(max_size=30), st.text(st.characters(codec="utf-8"), min_size=190, max_size=260),
                  st.sampled_from(["", " ", "\x00", "a\nb", "../../etc/passwd", "x" * 70_000, "\ud800",
                                   "q1", "run.trec", "trec", "qrels", "run", "records", "operator", "typed"]))
_NUMBER = st.one_of(st.integers(-2**70, 2**70), st.floats(), st.sampled_from([0, 1, -1, 2**63, 10**400 // 10**399,
                                                                               float("nan"), float("inf"), 1e308]))
_LEAF = st.one_of(st.none(), st.booleans(), _NUMBER, _TEXT, st.binary(max_size=20), st.just(object()))
_NESTED = st.recursive(_LEAF, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.one_of(_TEXT, _NUMBER), inner, max_size=4)),
                       max_leaves=12)
_DEEP = st.builds(_deep, st.sampled_from([31, 33, 200, 5_000, 100_000]), st.sampled_from(["list", "dict"]))
_WIDE = st.sampled_from([{"k%d" % i: i for i in range(20_000)}, list(range(20_000)), {"a": "y" * 70_000}])
ANY = st.one_of(_NESTED, _DEEP, _WIDE)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz-store")
    opened = open_store(data_dir=folder)
    digest = opened.put_dataset(b"q1 0 d1 1\n", kind="qrels", filename="qrels.trec")
    saved = opened.save_workspace("w", [DatasetRef(digest, "qrels", "qrels.trec")])
    opened.fuzz_values = {"digest": digest, "workspace": saved.workspace_id, "token": saved.owner_token,
                          "folder": str(folder)}
    yield opened
    opened.close()
    print("\nstore fuzzing: " + ", ".join(f"{k[0]} {k[1]} {n}" for k, n in sorted(OUTCOMES.items())))


def _valid_or(valid, strategy=ANY):
    return st.one_of(st.just(valid), strategy) if valid is not None else strategy


def _call(store, method: str, fn, *args, **kwargs):
    try:
        result = fn(*args, **kwargs)
    except StoreError as error:
        OUTCOMES[(method, "refused")] += 1
        message = f"{error} {error.args}"
        assert store.fuzz_values["folder"] not in message, f"{method}: a server path in {message!r}"
        return
    except Exception as error:  # noqa: BLE001: any other exception is what this test looks for
        pytest.fail(f"{method}: {type(error).__name__} escaped: {str(error)[:300]}\nargs {str(args)[:300]} "
                    f"kwargs {str(kwargs)[:300]}", pytrace=False)
    OUTCOMES[(method, "done")] += 1
    return result


def _settings():
    return settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, print_blob=False,
                    suppress_health_check=list(HealthCheck))


def test_dataset_ref_and_put_dataset(store):
    @_settings()
    @given(_valid_or(store.fuzz_values["digest"]), _valid_or("qrels"), _valid_or("qrels.trec"), ANY, _valid_or("trec"),
           st.one_of(st.binary(max_size=100), ANY))
    def check(digest, kind, filename, system, fmt, data):
        _call(store, "DatasetRef", DatasetRef, digest, kind, filename, system, fmt)
        _call(store, "put_dataset", store.put_dataset, data, kind=kind, filename=filename)
        _call(store, "get_dataset", store.get_dataset, digest)

    check()


def test_save_workspace(store):
    @_settings()
    @given(_valid_or("w"), st.one_of(st.just("valid"), ANY), _valid_or(None), ANY, _valid_or(None), _valid_or(None))
    def check(name, datasets, expires, meta, owner_id, max_owned):
        if datasets == "valid":
            datasets = [DatasetRef(store.fuzz_values["digest"], "qrels", "qrels.trec")]
        _call(store, "save_workspace", store.save_workspace, name, datasets, expires_in_days=expires, meta=meta,
              owner_id=owner_id, max_owned=max_owned)

    check()


def test_workspace_lookups(store):
    @_settings()
    @given(_valid_or(store.fuzz_values["workspace"]), _valid_or(store.fuzz_values["token"]), ANY, ANY)
    def check(workspace_id, token, owner_id, ids):
        _call(store, "load_workspace", store.load_workspace, workspace_id)
        _call(store, "list_workspaces", store.list_workspaces, ids)
        _call(store, "owned_workspaces", store.owned_workspaces, owner_id)
        if token != store.fuzz_values["token"]:  # keep the one workspace for the other examples
            _call(store, "delete_workspace", store.delete_workspace, workspace_id, token, owner_id=owner_id)

    check()


def test_usage_and_judge_runs(store):
    @_settings()
    @given(_valid_or("user"), _valid_or("User"), _valid_or("gpt"), _valid_or("127.0.0.1:1"), _valid_or("operator"),
           _valid_or(10), ANY, _valid_or({"requests": 1, "cost": 0.5}), _valid_or("done"), ANY, ANY)
    def check(user, label, model, endpoint, origin, records, budget, stats, outcome, since, run_id):
        started = _call(store, "begin_judge_run", store.begin_judge_run, user_id=user, user_label=label, model=model,
                        endpoint=endpoint, origin=origin, records=records, run_budget=budget)
        run_id = started[0] if started is not None else run_id
        _call(store, "report_judge_run", store.report_judge_run, run_id, stats, outcome=outcome, message=model)
        _call(store, "judge_runs", store.judge_runs, since=since, user_id=user, limit=records)
        _call(store, "record_upload", store.record_upload, user, records)
        _call(store, "uploaded_today", store.uploaded_today, user)

    check()
