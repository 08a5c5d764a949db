"""Write deepeval_test_run.json with DeepEval itself (run in a venv with `pip install deepeval`;
4.3.1 made the committed file). No LLM is called: the test cases and their metric results are
built with DeepEval's own models (LLMApiTestCase, MetricData, TestRun) as `deepeval test run` /
`evaluate()` fill them, and written with TestRun.save, the method DeepEval saves runs with."""

import sys

from deepeval.test_run.api import LLMApiTestCase
from deepeval.test_run.test_run import TestRun
from deepeval.tracing.api import MetricData


def metric(name, score, threshold, reason, error=None):
    return MetricData(name=name, threshold=threshold, success=None if error else score >= threshold,
                      score=None if error else score, reason=reason, strictMode=False,
                      evaluationModel="gpt-4.1", error=error, evaluationCost=0.0)


cases = [
    LLMApiTestCase(name="test_case_0", input="What is the refund window?", actualOutput="30 days from delivery.",
                   expectedOutput="Refunds are possible within 30 days of delivery.",
                   retrievalContext=["Items can be returned within 30 days of delivery.", "Shipping is free over $50."],
                   completionTime=1.25, order=0),
    LLMApiTestCase(name="test_case_1", input="Do you ship to Canada?", actualOutput="Yes, in 2 days, for free.",
                   expectedOutput="Yes, Canada shipping takes 5-7 business days.",
                   retrievalContext=["We ship to the US and Canada.", "Canadian orders take 5-7 business days."],
                   completionTime=2.5, order=1),
    LLMApiTestCase(name="test_case_2", input="Can I pay with PayPal?", actualOutput="I don't know.",
                   expectedOutput="Yes, PayPal is accepted at checkout.",
                   retrievalContext=["Gift cards never expire."], order=2),
]
results = [
    [metric("Faithfulness", 1.0, 0.7, "Every claim is supported by the retrieval context."),
     metric("Answer Relevancy", 1.0, 0.7, "The answer addresses the question."),
     metric("Contextual Precision", 1.0, 0.7, "The relevant node is ranked first."),
     metric("Contextual Recall", 1.0, 0.7, "The expected output is attributable to node 1."),
     metric("Correctness [GEval]", 0.9, 0.5, "Matches the expected output.")],
    [metric("Faithfulness", 0.5, 0.7, "'in 2 days' and 'for free' contradict the retrieval context."),
     metric("Answer Relevancy", 1.0, 0.7, "The answer addresses the question."),
     metric("Contextual Precision", 1.0, 0.7, "Both nodes are relevant."),
     metric("Contextual Recall", 1.0, 0.7, "Every sentence is attributable."),
     metric("Correctness [GEval]", 0.2, 0.5, "Wrong delivery time.")],
    [metric("Faithfulness", 1.0, 0.7, "No claims to check."),
     metric("Answer Relevancy", 0.0, 0.7, "The answer does not address the question."),
     metric("Contextual Precision", 0.0, 0.7, "No node is relevant."),
     metric("Contextual Recall", 0.0, 0.7, "Nothing in the expected output is in the retrieval context."),
     metric("Correctness [GEval]", 0.0, 0.5, "", error="RateLimitError: 429 Too Many Requests")],
]
run = TestRun(testFile="test_support_bot.py", testCases=[], metricsScores=[])
for case, metrics in zip(cases, results):
    for m in metrics:
        case.update_metric_data(m)
    run.add_test_case(case)
run.test_passed = sum(bool(c.success) for c in cases)
run.test_failed = len(cases) - run.test_passed
with open(sys.argv[1], "w") as f:
    run.save(f)
