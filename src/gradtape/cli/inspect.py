"""``python -m gradtape inspect SCRIPT.py [ARGS...]``: run a script, then print the
backward functions it compiled (and, for each ``@gt.function`` trace, its forward IR,
generated forward source and backward IR).

Inside the script every new gradient structure is compiled on its first call (not on
its second, as usual), so a script that computes one gradient still shows its code.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence

USAGE = "usage: python -m gradtape inspect SCRIPT.py [ARGS...]"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the script in ``argv``, print its compiled backward functions; exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "inspect":
        args = args[1:]
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        print(__doc__.split("\n\n", 1)[1].strip())
        return 0 if args else 2
    script = args[0]
    if not os.path.isfile(script):
        print(f"gradtape inspect: no such file: {script}", file=sys.stderr)
        return 2

    from ..codegen.naming import comment_text
    from ..compiler import build
    from ..core.config import config
    from ..functions.api import describe, trace_listeners

    compiled = {}
    traces: list = []  # (Function, ConcreteFunction) for every @gt.function trace

    def collect(entry) -> None:
        compiled.setdefault(entry.filename, entry.source)

    def collect_trace(fn, concrete) -> None:
        traces.append((fn, concrete))

    status = 0
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = list(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    build.compile_listeners.append(collect)
    trace_listeners.append(collect_trace)
    try:
        with config(compile=True, compile_after=1):
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code
        status = code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        build.compile_listeners.remove(collect)
        trace_listeners.remove(collect_trace)
        sys.argv, sys.path[:] = saved_argv, saved_path
    sys.stdout.flush()
    script = comment_text(script)  # the header lines are comments: one line each
    print(f"\n# gradtape inspect: {len(compiled)} backward function(s) compiled by {script}")
    for k, (filename, source) in enumerate(compiled.items(), 1):
        print(f"\n# ---- {k}/{len(compiled)}: {filename} ----")
        print(source.rstrip("\n"))
    if traces:
        print(f"\n# gradtape inspect: {len(traces)} @gt.function trace(s) by {script}")
        for k, (fn, concrete) in enumerate(traces, 1):
            print(f"\n# ---- {k}/{len(traces)}: @gt.function {comment_text(fn.__name__)} ----")
            print(describe(concrete))
    return status
