"""Write phoenix_evals.csv with Phoenix's evals library itself (run in a venv with
`pip install arize-phoenix-evals`; 3.9.4 made the committed file). Code evaluators made with
`create_evaluator` stand in for the LLM judges (no LLM is called) under the names of Phoenix's
built-in RAG evaluators (faithfulness, maximize; hallucination, minimize; document_relevance),
`evaluate_dataframe` scores a small frame of RAG requests, and the result is saved with pandas'
to_csv as users export it: each `<name>_score` cell is the JSON-serialised Score."""

import sys

import pandas as pd
from phoenix.evals import create_evaluator, evaluate_dataframe

FAITHFUL = {"30 days from delivery.": 1.0, "Yes, in 2 days, for free.": 0.0, "I don't know.": 1.0}
RELEVANT = {"What is the refund window?": 1.0, "Do you ship to Canada?": 1.0, "Can I pay with PayPal?": 0.0}


@create_evaluator(name="faithfulness", direction="maximize")
def faithfulness(output: str) -> float:
    return FAITHFUL[output]


@create_evaluator(name="hallucination", direction="minimize")
def hallucination(output: str) -> float:
    return 1.0 - FAITHFUL[output]


@create_evaluator(name="document_relevance", direction="maximize")
def document_relevance(input: str) -> float:
    return RELEVANT[input]


frame = pd.DataFrame({
    "context.span_id": ["5a1e0c9b2f7d4e11", "8c3f6a0d1b2e4f22", "b7d2e9f4a6c1d833"],
    "input": list(RELEVANT),
    "output": list(FAITHFUL),
    "context": ["Items can be returned within 30 days of delivery.", "Canadian orders take 5-7 business days.",
                "Gift cards never expire."],
})
result = evaluate_dataframe(frame, [faithfulness, hallucination, document_relevance])
result.to_csv(sys.argv[1], index=False)
print(result.columns.tolist())
