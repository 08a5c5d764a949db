"""test_common: checks run on every registered metric (in the spirit of scikit-learn's
metrics/tests/test_common.py). A new registry entry gets all of these for free:

- the entry is complete, its functions resolve, its list function and kernel take its inputs in
  argument order, what a judge needs agrees with who fills its inputs, its export names are unique;
- its hand-computed vectors give the same value through every path: the list function, the
  per-request kernel, ``evaluate`` (ranking) or ``evaluate_records`` (RAG and operational; the
  ranking metrics records compute too), the dashboard's loader (``dashboard.loaders`` from file
  bytes, as an upload goes) and ``engine="dask"`` (ranking; one LocalCluster for the module);
- for every RAG metric: all verdicts missing gives NaN with coverage 0, some requests missing give
  the mean over the defined ones with coverage defined / total, on the list function and on
  ``evaluate_records``;
- its range, invariance to the order of queries, the maximum on a perfect input, the documented
  value when nothing is relevant, names that parse back to it, every name docs/metrics.md
  advertises parses, every dashboard page it names exists.
"""

from __future__ import annotations

import inspect
import json
import math
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import evalsuite as es
from evalsuite.metrics.entry import EXPORT_TOOLS, JUDGE_KINDS
from evalsuite.metrics.functions import kernel, list_function
from evalsuite.metrics.names import metric_info
from evalsuite.metrics.registry import DEFAULTS, EXPORT_NAMES, GIVEN_SCORES, KINDS, METRICS

REPO = Path(__file__).resolve().parents[2]
ENTRIES = list(METRICS.values())
IDS = [m.name for m in ENTRIES]
RANKING = [m for m in ENTRIES if m.kind == "ranking"]
RAG = [m for m in ENTRIES if m.kind in ("context", "answer")]
PER_REQUEST = [m for m in ENTRIES if m.kind != "ranking"]
# Options of a list function that evaluate_records does not take (it takes compat): vectors that
# set them are checked through the list function and the kernel only.
_RECORD_OPTIONS = {"compat"}


def _lists(qrels: dict, run: dict) -> tuple[list, list]:
    """ranx-shaped dicts to the list API's (relevant, retrieved), the run ordered by score."""
    queries = list(qrels)
    relevant = [qrels[q] for q in queries]
    retrieved = [sorted(run.get(q, {}), key=lambda d: (-run[q][d], d)) for q in queries]
    return relevant, retrieved


def compute(metric, arguments: dict) -> es.Score:
    """The metric's value for a vector's arguments, through its public function."""
    arguments = dict(arguments)
    if metric.kind == "ranking":
        name = arguments.pop("metric")
        return es.evaluate(arguments["qrels"], arguments["run"], [name]).scores[name]
    return list_function(metric)(**arguments, **metric.function_arguments)


def _value(score) -> float:
    return float(score)


def _same(a: float, b: float, tol: float = 1e-12) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=tol)


# -- the entry --------------------------------------------------------------------------------

@pytest.mark.parametrize("metric", ENTRIES, ids=IDS)
def test_entry_is_complete(metric):
    assert metric.kind in KINDS
    assert metric.title and metric.summary and metric.formula and metric.source and metric.pages
    assert metric.conventions and all(metric.conventions)
    assert metric.vectors, "every metric has at least one hand-computed vector"
    assert all(v.arithmetic for v in metric.vectors)
    low, high = metric.value_range
    assert low < high
    assert callable(list_function(metric)) and callable(kernel(metric))
    # the entry's list function is the public name it gives
    assert getattr(es, metric.function.removeprefix("evalsuite.")) is list_function(metric)
    assert set(metric.exports) <= set(EXPORT_TOOLS)
    if metric.kind != "ranking":
        assert metric.inputs and metric.missing, "a per-request metric names its inputs and its missing rule"
        assert metric.kernel.startswith(f"evalsuite.metrics.") and metric.kernel.endswith("_values")


@pytest.mark.parametrize("metric", PER_REQUEST, ids=lambda m: m.name)
def test_list_function_and_kernel_take_the_inputs_in_argument_order(metric):
    arguments = [i.argument for i in metric.inputs]
    assert len(set(arguments)) == len(arguments)
    for function in (list_function(metric), kernel(metric)):
        parameters = list(inspect.signature(function).parameters)
        assert [p for p in parameters if p in arguments] == arguments, function.__name__
    assert "compat" in inspect.signature(kernel(metric)).parameters
    for item in metric.inputs:
        assert set(item.judges) <= set(JUDGE_KINDS)
        assert not item.instead_of or item.instead_of in metric.columns


@pytest.mark.parametrize("metric", [m for m in ENTRIES if m.needs is not None], ids=lambda m: m.name)
def test_what_a_judge_needs_agrees_with_who_fills_the_inputs(metric):
    kinds = {"ragas": "llm"}
    can_fill = {kinds.get(j, j) for i in metric.inputs for j in i.judges}
    assert set(metric.needs.judges) <= can_fill
    for item in metric.inputs:
        if item.required and not item.instead_of:
            assert {kinds.get(j, j) for j in item.judges} & set(metric.needs.judges), item.column
    assert set(metric.needs.fields) <= {"question", "answer", "reference", "contexts"}


def test_export_names_name_one_metric_each_and_given_scores_are_not_metrics():
    for tool in EXPORT_TOOLS:
        owners: dict = {}
        for entry in (*ENTRIES, *GIVEN_SCORES.values()):
            for name in entry.exports.get(tool, ()):
                assert owners.setdefault(name, entry.name) == entry.name, (tool, name)
        assert dict(EXPORT_NAMES[tool]) == owners
    assert not set(GIVEN_SCORES) & set(METRICS)


def test_every_page_an_entry_names_exists():
    from dashboard.constants import PAGES

    titles = {title for _, title, _, _ in PAGES}
    for metric in ENTRIES:
        assert set(metric.pages) <= titles, (metric.name, set(metric.pages) - titles)
        for page in metric.pages:
            module = next(m for m, title, _, _ in PAGES if title == page)
            assert (REPO / "pages" / f"{module}.py").is_file()


# -- hand vectors through every path ----------------------------------------------------------

@pytest.mark.parametrize("metric", ENTRIES, ids=IDS)
def test_vectors(metric):
    for vector in metric.vectors:
        assert _value(compute(metric, vector.arguments)) == pytest.approx(vector.expected, abs=1e-12), vector.arithmetic


@pytest.mark.parametrize("metric", RANKING, ids=lambda m: m.name)
def test_ranking_vectors_through_the_list_function(metric):
    for vector in metric.vectors:
        spec = es.parse_metric(vector.arguments["metric"])
        relevant, retrieved = _lists(vector.arguments["qrels"], vector.arguments["run"])
        if metric.function == "evalsuite.ranking_metric":
            score = list_function(metric)(relevant, retrieved, vector.arguments["metric"])
        else:
            score = list_function(metric)(relevant, retrieved, k=spec.k, **metric.function_arguments)
        assert float(score) == pytest.approx(vector.expected, abs=1e-12)


def _kernel_arguments(metric, arguments: dict) -> dict:
    """A vector's arguments as the kernel takes them: the inputs, and compat."""
    names = {i.argument for i in metric.inputs} | {"compat"}
    return {k: v for k, v in arguments.items() if k in names}


@pytest.mark.parametrize("metric", PER_REQUEST, ids=lambda m: m.name)
def test_per_request_vectors_through_the_kernel(metric):
    for vector in metric.vectors:
        extra = set(vector.arguments) - {i.argument for i in metric.inputs} - {"compat"}
        if extra:  # options the kernel takes as keywords too (threshold, mode, beta)
            values = kernel(metric)(**vector.arguments)
        else:
            values = kernel(metric)(**_kernel_arguments(metric, vector.arguments), **metric.kernel_arguments)
        expected = list_function(metric)(**vector.arguments, **metric.function_arguments).per_query
        assert np.array_equal(np.asarray(values, float), np.asarray(expected, float), equal_nan=True)
        if metric.aggregate == "mean" and metric.name != "latency":
            assert np.nanmean(values) == pytest.approx(vector.expected, abs=1e-12)


def _records_of(metric, arguments: dict, system: str = "s") -> list[dict]:
    """A per-request vector's arguments as records: each input argument under its column."""
    columns = {}
    for item in metric.inputs:
        if item.argument in arguments:
            columns["critique_x" if item.pattern else item.column] = arguments[item.argument]
    n = len(next(iter(columns.values())))
    return [{"query_id": f"q{i}", "system": system, **{c: v[i] for c, v in columns.items()}} for i in range(n)]


def _from_report(metric, report, system: str = "s") -> tuple[float, float] | None:
    """(value, coverage) of a metric in a RecordsReport, None when the report does not list it."""
    if metric.name == "success":
        score = report.task_success.get(system)
    elif metric.name == "failure_rate":
        score = report.failures.get(system)
    elif metric.name == "latency":
        table = report.latency_table
        row = table[(table["system"] == system) & (table["stage"] == "end_to_end")]
        return (float(row["p95"].iloc[0]), float("nan")) if len(row) else None
    else:
        score = report.scores.get(system, {}).get("critique_x" if metric.inputs[0].pattern else metric.name)
    return None if score is None else (float(score), float(score.params.get("coverage", float("nan"))))


def _record_vectors(metric):
    return [v for v in metric.vectors if not (set(v.arguments) - {i.argument for i in metric.inputs} - _RECORD_OPTIONS)]


@pytest.mark.parametrize("metric", PER_REQUEST, ids=lambda m: m.name)
def test_per_request_vectors_through_evaluate_records(metric):
    vectors = _record_vectors(metric)
    assert vectors or metric.name == "factual_correctness", "at least one vector runs through evaluate_records"
    for vector in vectors:
        records = es.Records.from_rows(_records_of(metric, vector.arguments))
        report = es.evaluate_records(records, compat=vector.arguments.get("compat"))
        found = _from_report(metric, report)
        assert found is not None, f"{metric.name} not in the report"
        assert found[0] == pytest.approx(vector.expected, abs=1e-12), vector.arithmetic
        if metric.kind in ("context", "answer"):
            assert metric.name in report.metrics or metric.inputs[0].pattern


@pytest.mark.parametrize("metric", [m for m in RANKING if m.name in DEFAULTS["records"]], ids=lambda m: m.name)
def test_ranking_vectors_through_evaluate_records(metric):
    for vector in metric.vectors:
        spec = es.parse_metric(vector.arguments["metric"])
        if spec.k is None or spec.param is not None:
            continue
        qrels, run = vector.arguments["qrels"], vector.arguments["run"]
        relevant, retrieved = _lists(qrels, run)
        rows = [{"query_id": q, "system": "s", "context_ids": r, "relevant_ids": g}
                for q, g, r in zip(qrels, relevant, retrieved)]
        report = es.evaluate_records(es.Records.from_rows(rows), k=spec.k)
        assert float(report.scores["s"][f"{metric.name}@{spec.k}"]) == pytest.approx(vector.expected, abs=1e-12)


def _trec_bytes(qrels: dict, run: dict) -> tuple[bytes, bytes]:
    qrels_text = "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    run_text = "".join(f"{q} Q0 {d} {rank} {score!r} vec\n" for q, docs in run.items()
                       for rank, (d, score) in enumerate(sorted(docs.items(), key=lambda x: -x[1]), start=1))
    return qrels_text.encode(), run_text.encode()


def _ranking_groups() -> dict:
    """Every ranking vector grouped by its (qrels, run): one evaluation per group and path."""
    groups: dict = {}
    for metric in RANKING:
        for vector in metric.vectors:
            key = json.dumps([vector.arguments["qrels"], vector.arguments["run"]], sort_keys=True)
            groups.setdefault(key, []).append((metric, vector))
    return groups


RANKING_GROUPS = _ranking_groups()


@pytest.mark.parametrize("key", list(RANKING_GROUPS), ids=[f"group{i}" for i in range(len(RANKING_GROUPS))])
def test_ranking_vectors_through_the_dashboards_loader(key):
    from dashboard import loaders

    qrels, run = json.loads(key)
    qrels_data, run_data = _trec_bytes(qrels, run)
    names = tuple(dict.fromkeys(v.arguments["metric"] for _, v in RANKING_GROUPS[key]))
    parsed_qrels = loaders.read_qrels(loaders.digest_of(qrels_data), "vectors.qrels", qrels_data)
    parsed_run = loaders.read_run(loaders.digest_of(run_data), "vectors.run", run_data)
    report = loaders.evaluate_run(loaders.digest_of(qrels_data), loaders.digest_of(run_data), names, 1,
                                  parsed_qrels, parsed_run)
    for metric, vector in RANKING_GROUPS[key]:
        assert float(report.scores[vector.arguments["metric"]]) == pytest.approx(vector.expected, abs=1e-12), \
            (metric.name, vector.arithmetic)


@pytest.mark.parametrize("metric", PER_REQUEST, ids=lambda m: m.name)
def test_per_request_vectors_through_the_dashboards_loader(metric):
    from dashboard import loaders, page_data
    from dashboard.session import StoredFile

    for vector in _record_vectors(metric):
        if vector.arguments.get("compat"):  # the dashboard evaluates records with the default conventions
            continue
        data = "\n".join(json.dumps(row) for row in _records_of(metric, vector.arguments)).encode()
        upload = StoredFile("records", f"{metric.name}.jsonl", loaders.digest_of(data), data, "jsonl")
        _, report = page_data.records_report_of([upload], 10, 1)
        found = _from_report(metric, report)
        assert found is not None and found[0] == pytest.approx(vector.expected, abs=1e-12), vector.arithmetic


@pytest.fixture(scope="module")
def dask_client():
    """One LocalCluster for the module. Dask starts workers with spawn, which re-runs the file of
    sys.modules["__main__"] (app.py after the AppTests): a bare __main__ while it runs."""
    distributed = pytest.importorskip("distributed")
    saved = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=":0",
                                      memory_limit="1GiB") as cluster, distributed.Client(cluster) as client:
            yield client
    finally:
        sys.modules["__main__"] = saved


@pytest.mark.parametrize("key", list(RANKING_GROUPS), ids=[f"group{i}" for i in range(len(RANKING_GROUPS))])
def test_ranking_vectors_through_the_dask_engine(key, dask_client):
    qrels, run = json.loads(key)
    names = list(dict.fromkeys(v.arguments["metric"] for _, v in RANKING_GROUPS[key]))
    local = es.evaluate(qrels, run, names)
    report = es.evaluate(es.Qrels.from_dict(qrels), es.Run.from_dict(run), names, engine="dask",
                         scheduler=dask_client)
    for metric, vector in RANKING_GROUPS[key]:
        name = vector.arguments["metric"]
        assert float(report.scores[name]) == pytest.approx(vector.expected, abs=1e-12), (metric.name, vector.arithmetic)
        assert np.array_equal(np.asarray(report.scores[name].per_query), np.asarray(local.scores[name].per_query))


# -- missing verdicts -------------------------------------------------------------------------

def _missing(metric, arguments: dict) -> dict:
    """The arguments with every verdict missing: each item of a list input None (lists keep their
    length), a per-request value or text list None."""
    out = dict(arguments)
    for item in metric.inputs:
        if item.argument not in arguments:
            continue
        values = arguments[item.argument]
        if item.kind in ("labels", "grades"):
            out[item.argument] = [None if v is None else [None] * len(v) for v in values]
        else:
            out[item.argument] = [None] * len(values)
    return out


def _appended(a: dict, b: dict, inputs) -> dict:
    out = dict(a)
    for name in inputs:
        if name in a:
            out[name] = list(a[name]) + list(b[name])
    return out


@pytest.mark.parametrize("metric", RAG, ids=lambda m: m.name)
def test_all_verdicts_missing_is_undefined_with_coverage_0(metric):
    for vector in metric.vectors:
        missing = _missing(metric, vector.arguments)
        score = list_function(metric)(**missing, **metric.function_arguments)
        assert math.isnan(float(score)) and score.params["coverage"] == 0.0, vector.arithmetic
        lists = [missing[i.argument] for i in metric.inputs if i.argument in missing]
        if vector in _record_vectors(metric) and any(v is not None for values in lists for v in values):
            # (columns that are null on every record are not a metric's input: nothing is computed or listed)
            report = es.evaluate_records(es.Records.from_rows(_records_of(metric, missing)),
                                         compat=vector.arguments.get("compat"))
            value, coverage = _from_report(metric, report)
            assert math.isnan(value) and coverage == 0.0


@pytest.mark.parametrize("metric", RAG, ids=lambda m: m.name)
def test_some_requests_missing_give_the_mean_over_the_defined_ones(metric):
    inputs = [i.argument for i in metric.inputs]
    for vector in metric.vectors:
        original = list_function(metric)(**vector.arguments, **metric.function_arguments)
        n = len(original.per_query)
        defined = int(np.sum(~np.isnan(np.asarray(original.per_query, float))))
        extra = _missing(metric, vector.arguments)  # as many requests again, every verdict missing
        both = _appended(vector.arguments, extra, inputs)
        score = list_function(metric)(**both, **metric.function_arguments)
        assert float(score) == pytest.approx(vector.expected, abs=1e-12), vector.arithmetic
        assert score.params["coverage"] == pytest.approx(defined / (2 * n))
        if vector in _record_vectors(metric):
            report = es.evaluate_records(es.Records.from_rows(_records_of(metric, both)),
                                         compat=vector.arguments.get("compat"))
            value, coverage = _from_report(metric, report)
            assert value == pytest.approx(vector.expected, abs=1e-12) and coverage == pytest.approx(defined / (2 * n))


def test_a_missing_reference_verdict_is_not_a_missing_false_negative():
    # One answer claim supported; the reference's two claims were never judged (the judge failed).
    # Recall and F1 need the reference's side: undefined, not 1.0 (the bug of issue 26).
    for function in (es.factual_correctness, es.answer_correctness):
        score = function([[True]], [[None, None]])
        assert math.isnan(float(score)) and score.params["coverage"] == 0.0
    assert float(es.factual_correctness([[True]], [[None, None]], mode="recall")) != 1.0
    assert float(es.factual_correctness([[True]], [[None, None]], mode="precision")) == 1.0  # TP / (TP + FP) = 1/1
    # compat="ragas" keeps RAGAS's 1.0 for two empty claim lists, not for missing verdicts
    assert float(es.answer_correctness([[]], [[]], compat="ragas")) == 1.0
    assert math.isnan(float(es.answer_correctness([[None]], [[]], compat="ragas")))
    assert math.isnan(float(es.context_precision([[None, None]], compat="ragas")))
    assert float(es.context_precision([[]], compat="ragas")) == 0.0
    report = es.evaluate_records(es.Records.from_rows([
        {"query_id": "q1", "answer_claims_in_reference": [True], "reference_claims_in_answer": [None, None]},
        {"query_id": "q2", "answer_claims_in_reference": [True, False], "reference_claims_in_answer": [True, False]}],
        system="s"))
    for name in ("factual_correctness", "answer_correctness"):
        score = report.scores["s"][name]
        assert float(score) == pytest.approx(0.5) and score.params["coverage"] == 0.5  # TP 1 FP 1 FN 1: 2/4


def _random_cases(metric, rng, n_queries=12):
    """Random inputs of the metric's shape (several queries/requests) for the invariance checks."""
    if metric.kind == "ranking":
        name = metric.vectors[0].arguments["metric"]
        qrels, run = {}, {}
        for q in range(n_queries):
            docs = [f"d{i}" for i in rng.permutation(20)[:10]]
            qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in docs[:6]}
            run[f"q{q}"] = {d: float(rng.random()) for d in rng.permutation(docs)[:8]}
        return {"qrels": qrels, "run": run, "metric": name}
    arguments = dict(metric.vectors[0].arguments)
    out = {}
    for key, value in arguments.items():
        if key == "similarity":
            out[key] = [float(x) for x in rng.random(n_queries)]
        elif key == "stages":
            out[key] = [None if rng.random() < 0.5 else str(rng.choice(es.FAILURE_STAGES)) for _ in range(n_queries)]
        elif key == "values":
            out[key] = [float(x) for x in rng.random(n_queries) * 1000]
        elif key == "outcomes":
            out[key] = [bool(x) for x in rng.random(n_queries) < 0.6]
        elif key == "relevant":
            out[key] = [[float(g) for g in rng.random(int(rng.integers(1, 5)))] for _ in range(n_queries)]
        else:
            out[key] = [[bool(x) for x in rng.random(int(rng.integers(1, 6))) < 0.5] for _ in range(n_queries)]
    return out


def _permute(arguments: dict, order: np.ndarray) -> dict:
    out = {}
    for key, value in arguments.items():
        if key in ("qrels", "run"):
            keys = list(value)
            out[key] = {keys[i]: value[keys[i]] for i in order if i < len(keys)}
        elif isinstance(value, list):
            out[key] = [value[i] for i in order]
        else:
            out[key] = value
    return out


@pytest.mark.parametrize("metric", ENTRIES, ids=IDS)
def test_value_in_range_and_query_order_changes_nothing(metric):
    rng = np.random.default_rng(7)
    for _ in range(5):
        arguments = _random_cases(metric, rng)
        score = compute(metric, arguments)
        low, high = metric.value_range
        value = _value(score)
        assert math.isnan(value) or low <= value <= high
        per_query = np.asarray(score.per_query, dtype=float)
        assert np.all(np.isnan(per_query) | ((per_query >= low) & (per_query <= high)))
        order = rng.permutation(len(next(v for v in arguments.values() if isinstance(v, (list, dict)))))
        shuffled = _value(compute(metric, _permute(arguments, order)))
        assert shuffled == pytest.approx(value, rel=1e-12, abs=1e-12) or (math.isnan(shuffled) and math.isnan(value))


@pytest.mark.parametrize("metric", [m for m in ENTRIES if m.perfect is not None], ids=lambda m: m.name)
def test_a_perfect_input_scores_the_best_value(metric):
    best = metric.value_range[1] if metric.higher_is_better else metric.value_range[0]
    assert _value(compute(metric, metric.perfect)) == pytest.approx(best)


@pytest.mark.parametrize("metric", [m for m in ENTRIES if m.nothing_relevant is not None], ids=lambda m: m.name)
def test_nothing_relevant_follows_the_documented_rule(metric):
    arguments, expected = metric.nothing_relevant
    assert _value(compute(metric, arguments)) == pytest.approx(expected)


@pytest.mark.parametrize("metric", [m for m in ENTRIES if m.kind == "ranking"], ids=lambda m: m.name)
def test_every_accepted_name_parses_to_its_entry(metric):
    suffix = "@0.5" if metric.param else "@10" if metric.cutoff else ""
    names = [f"{n}{suffix}" for n in metric.parse_names] + [n.upper() + suffix for n in metric.parse_names]
    if metric.trec_param:
        names.append(f"{metric.trec_param}_0.50")
    if metric.trec_cut:
        names.append(f"{metric.trec_cut}_10")
    if metric.trec_whole:
        names.append(metric.trec_whole)
    for name in names:
        assert es.parse_metric(name).base == metric.name, name
        assert metric_info(name) is metric


@pytest.mark.parametrize("metric", [m for m in ENTRIES if m.kind == "ranking" and not m.cutoff and not m.param and m.parse_names],
                         ids=lambda m: m.name)
def test_a_metric_without_cutoff_refuses_one(metric):
    with pytest.raises(es.EvalSuiteError, match="takes no cutoff|persistence|recall level"):
        es.parse_metric(f"{metric.parse_names[0]}@10")


def test_metric_info_refuses_unknown_names():
    with pytest.raises(es.EvalSuiteError):
        metric_info("bogus@10")


def test_docs_are_generated_from_the_registry_and_current():
    result = subprocess.run([sys.executable, "scripts/build_docs.py", "--check"], cwd=REPO, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    text = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    for metric in ENTRIES:
        assert f'<a id="{metric.name}"></a>' in text


def _example(name: str) -> str:
    """A name as docs/metrics.md writes it, with its placeholders filled: k -> 10, a parameter
    letter -> 0.5 (a valid recall level, persistence and multiple of R)."""
    name = re.sub(r"@k$", "@10", name)
    name = re.sub(r"_k$", "_10", name)
    name = re.sub(r"@[a-z]$", "@0.5", name)
    return re.sub(r"_[a-z]$", "_0.50", name)


def test_every_name_the_docs_advertise_parses_to_its_entry():
    text = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    advertised = 0
    for section in text.split('<a id="')[1:]:
        entry = section.split('"', 1)[0]
        found = re.search(r"\*\*Accepted here:\*\* (.*)", section)
        for name in re.findall(r"`([^`]+)`", found.group(1)) if found else ():
            assert metric_info(_example(name)).name == entry, name
            advertised += 1
    assert advertised >= len(RANKING)
    # the names docs/metrics.md used to advertise and parse_metric refuses (issue 26) are gone
    for name in ("bpref@k", "r_precision@k", "infap@k", "iprec_at_recall@k"):
        assert f"`{name}`" not in text


# -- the registry is the only list of metric names ---------------------------------------------

def _metric_names() -> set[str]:
    """Every name a metric goes by: canonical, parse names, other tools' names and exports, trec
    families, and the given scores'."""
    names = set(GIVEN_SCORES)
    for entry in GIVEN_SCORES.values():
        names.update(n for ns in entry.exports.values() for n in ns)
    for m in ENTRIES:
        names.update({m.name, *m.parse_names, *(n for ns in (*m.aliases.values(), *m.exports.values()) for n in ns)})
        names.update(t for t in (m.trec_cut, m.trec_whole, m.trec_param) if t)
    return names


# Literals that hold two metric names and are not a list of metrics, each with why.
NOT_METRIC_LISTS = {
    ("evalsuite/stats/agreement.py", frozenset({"precision", "recall"})):
        "a judge's agreement with human labels (classification precision and recall)",
    ("dashboard/page_data.py", frozenset({"precision", "recall"})): "the agreement table's columns",
    ("pages/calibration.py", frozenset({"precision", "recall"})): "the agreement table's columns",
    ("evalsuite/metrics/correctness.py", frozenset({"f1", "precision", "recall"})):
        "FACTUAL_MODES: the modes of factual correctness",
    ("evalsuite/display/_tables_ranking.py", frozenset({"precision", "recall"})):
        "the columns of the precision-recall curve table",
    ("dashboard/label_calibration.py", frozenset({"precision", "recall"})): "the agreement table's columns",
    ("dashboard/labelling.py", frozenset({"faithfulness", "context_relevance", "context_precision", "context_recall",
                                          "answer_correctness"})):
        "the Label page's yes/no question for some judged metrics (the metrics offered come from the registry; "
        "any other gets a question from its registry summary)",
}
# Outside the scan: the registry itself, the tests, and benchmarks/ (what is timed against
# pytrec_eval and ranx, in each peer's own names). ``__all__`` and the package root's ``_PUBLIC``
# name public functions, which carry the metrics' names.
_REGISTRY_FILES = {"registry.py", "_ranking_entries.py", "_trec_eval_entries.py", "_rag_entries.py", "_given_entries.py"}


def test_no_metric_name_list_outside_the_registry():
    import ast

    names = _metric_names()

    def is_metric(text: str) -> bool:
        return text in names or ("@" in text and text.split("@", 1)[0].lower() in names)

    files = [*REPO.glob("evalsuite/**/*.py"), *REPO.glob("dashboard/**/*.py"), *REPO.glob("pages/*.py"),
             REPO / "app.py", *REPO.glob("scripts/*.py")]
    found, used = [], set()
    for path in files:
        relative = path.relative_to(REPO).as_posix()
        if relative.startswith("evalsuite/metrics/") and path.name in _REGISTRY_FILES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        public = {id(n.value) for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign))
                  and any(isinstance(t, ast.Name) and t.id in ("__all__", "_PUBLIC")
                          for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))}
        skipped = {id(c) for n in ast.walk(tree) if id(n) in public for c in ast.walk(n)}
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else \
                [k for k in node.keys if k is not None] if isinstance(node, ast.Dict) else []
            hits = frozenset(i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)
                             and is_metric(i.value))
            if len(hits) < 2:
                continue
            if (relative, hits) in NOT_METRIC_LISTS:
                used.add((relative, hits))
                continue
            found.append(f"{relative}:{node.lineno}: {sorted(hits)}")
    assert not found, "metric names listed outside the registry (derive them from it):\n" + "\n".join(found)
    assert used == set(NOT_METRIC_LISTS), f"stale entries: {set(NOT_METRIC_LISTS) - used}"
