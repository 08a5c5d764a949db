"""The store's part of a hosted dashboard, on SQLite and PostgreSQL: workspace owners, the per-user
limits applied in the same transaction as the writes they allow (also under concurrent sessions),
the audit log of judge runs, daily upload bytes, and the upgrade of a store made before owners."""

from __future__ import annotations

import threading

import pytest

from evalsuite.hosting import Limits
from evalsuite.storage import STALE_RUN_SECONDS, DatasetRef, StoreError, open_store
from test_storage import Clock, _error, clock, raw, spec, store  # noqa: F401  (fixtures, both backends)

ALICE, BOB = "oidc:" + "a" * 32, "oidc:" + "b" * 32


def _refs(store, data: bytes = b"q1 0 d1 1\n"):
    digest = store.put_dataset(data, kind="qrels", filename="qrels.trec")
    return [DatasetRef(digest, "qrels", "qrels.trec")]


def test_workspaces_record_their_owner_who_alone_lists_and_deletes_them(store):
    mine = store.save_workspace("mine", _refs(store), owner_id=ALICE)
    theirs = store.save_workspace("theirs", _refs(store, b"q2 0 d2 1\n"), owner_id=BOB)
    anonymous = store.save_workspace("nobody's", _refs(store))
    assert store.load_workspace(mine.workspace_id).owner_id == ALICE
    assert store.load_workspace(anonymous.workspace_id).owner_id is None
    assert [s.workspace_id for s in store.owned_workspaces(ALICE)] == [mine.workspace_id]
    assert _error(store.delete_workspace, theirs.workspace_id, owner_id=ALICE).code == "wrong_token"
    assert _error(store.delete_workspace, anonymous.workspace_id, owner_id=ALICE).code == "wrong_token"
    store.delete_workspace(mine.workspace_id, owner_id=ALICE)
    assert _error(store.load_workspace, mine.workspace_id).code == "deleted"
    assert store.owned_workspaces(ALICE) == []
    store.delete_workspace(theirs.workspace_id, theirs.owner_token)  # the token still works


def test_workspaces_per_user_is_checked_when_saving(store):
    for i in range(2):
        store.save_workspace(f"w{i}", _refs(store), owner_id=ALICE, max_owned=2)
    error = _error(store.save_workspace, "w2", _refs(store), owner_id=ALICE, max_owned=2)
    assert error.code == "limit_reached" and "you keep 2 workspaces" in str(error)
    store.save_workspace("bob's", _refs(store), owner_id=BOB, max_owned=2)  # per user
    store.delete_workspace(store.owned_workspaces(ALICE)[0].workspace_id, owner_id=ALICE)
    store.save_workspace("w2", _refs(store), owner_id=ALICE, max_owned=2)


def _begin(store, user=ALICE, origin="operator", limits=None, run_budget=None):
    return store.begin_judge_run(user_id=user, user_label=f"{user[-3:]}@example.com", model="m",
                                 endpoint="127.0.0.1:9", origin=origin, records=3, limits=limits, run_budget=run_budget)


def test_daily_budget_runs_at_once_and_the_audit_log(store, clock):
    limits = Limits(judge_daily_budget=1.0, judge_runs_at_once=1, judge_runs_at_once_total=2)
    first, budget = _begin(store, limits=limits, run_budget=0.6)
    assert budget == pytest.approx(0.6)
    # One run of Alice's at a time; her typed-endpoint run waits too; Bob may start.
    assert "already running" in str(_error(_begin, store, limits=limits))
    assert "already running" in str(_error(_begin, store, origin="typed", limits=limits))
    bob, _ = _begin(store, user=BOB, limits=limits)
    assert "most at once" in str(_error(_begin, store, user="oidc:" + "c" * 32, limits=limits))
    store.report_judge_run(first, {"calls": 7, "cache_hits": 2, "prompt_tokens": 900, "completion_tokens": 80,
                                   "cost": 0.7}, outcome="budget", message="stopped by the budget")
    store.report_judge_run(bob, {"calls": 1, "cost": 0.1}, outcome="done")
    clock.advance(1)
    second, budget = _begin(store, limits=limits)
    assert budget == pytest.approx(0.3)  # 1.0 a day, 0.7 spent
    store.report_judge_run(second, {"calls": 3, "cost": 0.3}, outcome="done")
    error = _error(_begin, store, limits=limits)
    assert error.code == "limit_reached" and "budget is used up: 1.0000 of 1.0000" in str(error)
    clock.advance(1)
    typed, budget = _begin(store, origin="typed", limits=limits)  # the visitor's own endpoint: no operator money
    assert budget is None
    store.report_judge_run(typed, {"calls": 4}, outcome="cancelled")
    clock.advance(86400)  # a new UTC day
    _, budget = _begin(store, limits=limits)
    assert budget == pytest.approx(1.0)
    log = store.judge_runs(user_id=ALICE)
    assert [r.outcome for r in log] == ["running", "cancelled", "done", "budget"]
    budget_run = log[-1]
    assert (budget_run.requests, budget_run.cache_hits, budget_run.prompt_tokens, budget_run.completion_tokens,
            budget_run.cost, budget_run.reserved) == (7, 2, 900, 80, pytest.approx(0.7), 0.0)
    assert budget_run.user_label == "aaa@example.com" and budget_run.message == "stopped by the budget"
    assert len(store.judge_runs()) == 5 and len(store.judge_runs(since=clock() - 10)) == 1


def test_a_total_daily_budget_holds_for_everyone_together(store):
    limits = Limits(judge_daily_budget_total=0.5, judge_runs_at_once=None, judge_runs_at_once_total=None)
    run, budget = _begin(store, limits=limits)
    assert budget == pytest.approx(0.5)
    assert "this dashboard's daily judge budget is used up" in str(_error(_begin, store, user=BOB, limits=limits))
    store.report_judge_run(run, {"cost": 0.2}, outcome="done")
    assert _begin(store, user=BOB, limits=limits)[1] == pytest.approx(0.3)


def test_a_run_left_by_a_stopped_server_is_abandoned_after_its_silence(store, clock):
    limits = Limits(judge_daily_budget=1.0)
    run, _ = _begin(store, limits=limits, run_budget=0.5)
    store.report_judge_run(run, {"cost": 0.2})  # heartbeat
    clock.advance(STALE_RUN_SECONDS + 1)
    _, budget = _begin(store, limits=limits)
    assert budget == pytest.approx(0.8)  # its reported cost counts, its reservation no longer
    abandoned = [r for r in store.judge_runs() if r.run_id == run][0]
    assert abandoned.outcome == "abandoned" and abandoned.cost == pytest.approx(0.2)


def test_concurrent_starts_of_one_user_admit_exactly_one(spec, clock):
    limits = Limits(judge_daily_budget=1.0, judge_runs_at_once=1)
    stores = [open_store(**spec, clock=clock) for _ in range(8)]
    admitted, refused, barrier = [], [], threading.Barrier(len(stores))

    def start(s):
        barrier.wait()
        try:
            admitted.append(_begin(s, limits=limits, run_budget=0.4))
        except StoreError as exc:
            refused.append(exc.code)

    threads = [threading.Thread(target=start, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in stores:
        s.close()
    assert len(admitted) == 1 and refused == ["limit_reached"] * 7


def test_concurrent_uploads_never_pass_the_daily_limit(spec, clock):
    limits = Limits(upload_bytes_per_day=10_000)
    stores = [open_store(**spec, clock=clock) for _ in range(6)]
    counted, barrier = [], threading.Barrier(len(stores))

    def upload(s):
        barrier.wait()
        for _ in range(5):
            try:
                s.record_upload(ALICE, 900, limits)
                counted.append(900)
            except StoreError as exc:
                assert exc.code == "limit_reached" and "upload_mb_per_day" in str(exc)

    threads = [threading.Thread(target=upload, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(counted) == 9_900 and stores[0].uploaded_today(ALICE) == 9_900
    clock.advance(86400)
    assert stores[0].uploaded_today(ALICE) == 0 and stores[0].record_upload(ALICE, 10_000, limits) == 10_000
    for s in stores:
        s.close()


def test_a_store_made_before_owners_is_upgraded_in_place(spec, raw, clock):
    with open_store(**spec, clock=clock) as first:
        old = first.save_workspace("old", _refs(first))
    # Back to schema version 1: no owner column, no usage tables.
    for table in ("evalsuite_judge_runs", "evalsuite_daily_usage", "evalsuite_quota_locks"):
        raw.execute(f"DROP TABLE {table}")
    raw.execute("DROP INDEX evalsuite_workspaces_owner")
    raw.execute("ALTER TABLE evalsuite_workspaces DROP COLUMN owner_id")
    raw.execute("UPDATE evalsuite_store_meta SET value = '1' WHERE key = 'schema_version'")
    with open_store(**spec, clock=clock) as upgraded:
        assert upgraded.load_workspace(old.workspace_id).owner_id is None
        new = upgraded.save_workspace("new", _refs(upgraded), owner_id=ALICE)
        assert [s.workspace_id for s in upgraded.owned_workspaces(ALICE)] == [new.workspace_id]
        _begin(upgraded)
    assert raw.rows("SELECT value FROM evalsuite_store_meta WHERE key = 'schema_version'") == [("3",)]


def test_a_store_of_a_newer_schema_is_refused(spec, raw):
    with open_store(**spec):
        pass
    raw.execute("UPDATE evalsuite_store_meta SET value = '99' WHERE key = 'schema_version'")
    error = _error(open_store, **spec)
    assert error.code == "unavailable" and "newer EvalSuite" in str(error)
