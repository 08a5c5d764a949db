"""Write trulens_records.csv with TruLens itself (run in a venv with `pip install trulens-core`;
2.16.0 made the committed file). A TruBasicApp wraps a canned two-answer "RAG app" (no LLM), the
RAG-triad feedbacks are plain Python functions under the names TruLens's quickstart gives them
(Groundedness, Answer Relevance, Context Relevance), and the frame TruLens returns from
TruSession.get_records_and_feedback() is written with pandas' to_csv, as users export it."""

import os
import sys

os.environ.setdefault("TRULENS_OTEL_TRACING", "0")

from trulens.apps.basic import TruBasicApp
from trulens.core import Feedback, TruSession

ANSWERS = {"Who wrote Emma?": "Jane Austen wrote Emma.", "When was Emma published?": "In 1816, by John Murray."}
GROUNDED = {"Jane Austen wrote Emma.": 1.0, "In 1816, by John Murray.": 0.5}
RELEVANT = {"Who wrote Emma?": 0.9, "When was Emma published?": 0.0}


def app(question: str) -> str:
    return ANSWERS[question]


def groundedness(answer: str) -> float:
    return GROUNDED[answer]


def answer_relevance(question: str, answer: str) -> float:
    return 1.0


def context_relevance(question: str) -> float:
    return RELEVANT[question]


session = TruSession(database_url=f"sqlite:///{sys.argv[2]}/trulens.sqlite")
session.reset_database()
feedbacks = [Feedback(groundedness, name="Groundedness").on_output(),
             Feedback(answer_relevance, name="Answer Relevance").on_input_output(),
             Feedback(context_relevance, name="Context Relevance").on_input()]
recorder = TruBasicApp(app, app_name="emma_rag", app_version="v1", feedbacks=feedbacks, feedback_mode="with_app")
for question in ANSWERS:
    with recorder:
        recorder.app(question)
frame, names = session.get_records_and_feedback()
frame.to_csv(sys.argv[1])
print(names, frame.columns.tolist())
