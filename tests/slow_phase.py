"""``evalsuite`` with one phase of ``evalsuite judge`` held, for the Ctrl-C tests of that phase:

    python tests/slow_phase.py PHASE [evalsuite arguments ...]

PHASE is ``read`` (reading the records), ``estimate`` (the estimate) or ``write`` (writing the
judged records). When the phase begins, ``phase PHASE`` is printed on stderr, then the phase is
held (a sleep, as a long read, estimate or write would hold it: Ctrl-C arrives in the middle of
it) before it does its real work: 30 s for ``read`` and ``estimate`` (the interrupt ends them),
0.5 s for ``write`` (the interrupt waits for the file to be complete).
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's evalsuite, as `python -m` finds it


def held(function, phase: str, seconds: float):
    def hold(*args, **kwargs):
        print(f"phase {phase}", file=sys.stderr, flush=True)
        time.sleep(seconds)
        return function(*args, **kwargs)

    return hold


def main() -> int:
    phase, argv = sys.argv[1], sys.argv[2:]
    if phase == "read":
        import evalsuite.io.record_files as reading

        reading.read_records = held(reading.read_records, phase, 30.0)
    elif phase == "estimate":
        from evalsuite.judges.llm import LLMJudge

        LLMJudge.estimate = held(LLMJudge.estimate, phase, 30.0)
    elif phase == "write":
        import evalsuite.cli.judge as command

        command.write_records = held(command.write_records, phase, 0.5)
    else:
        raise SystemExit(f"unknown phase {phase!r}")
    from evalsuite.cli import main as evalsuite_main

    return evalsuite_main(argv)


if __name__ == "__main__":
    sys.exit(main())
