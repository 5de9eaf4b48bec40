# SPDX-License-Identifier: BSD-3-Clause
"""``synthrisk`` command line: parse, call :mod:`synthrisk.pipeline`, print, exit code.

Exit codes: 0 success; 1 the release gate failed (``--fail-on review|fail`` or ``gate:``
in the YAML, and the overall verdict is at or below that level; the reports are still
written); 2 usage or input error (``synthrisk: error: …`` on standard error, no
traceback); 3 internal error (a bug: please report it).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

from synthrisk.cli._commands import EXIT_INTERNAL, EXIT_USAGE
from synthrisk.cli._parser import UsageError, build_parser
from synthrisk.exceptions import SynthriskError

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    debug = "--debug" in (sys.argv[1:] if argv is None else argv)
    argv = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--debug"]
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            # a library's warning is shown after the run as one line, never as the
            # multi-line text Python prints (it would break the one-line error)
            warnings.simplefilter("default")
            args = parser.parse_args(argv)
            if args.command is None:
                parser.print_help(sys.stderr)
                return EXIT_USAGE
            args.argv = list(argv)
            code = int(_dispatch(args))
        _print_warnings(caught, debug=debug)
        return code
    except (UsageError, SynthriskError) as exc:
        print(f"synthrisk: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except (
        OSError
    ) as exc:  # the system refused a path: a name too long, a full disk, ...
        if debug:
            raise
        where = f" {exc.filename!r}" if exc.filename else ""
        print(
            f"synthrisk: error: cannot use{where}: {_one_line(exc.strerror or str(exc))}.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("synthrisk: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: say so plainly, traceback only on request
        if debug:
            raise
        print(
            f"synthrisk: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in synthrisk; please report it (run with --debug for the traceback).",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _one_line(text: str) -> str:
    """``text`` on one line (messages quoting YAML or parser errors span several)."""
    return " ".join(text.split())


def _print_warnings(caught: Sequence[warnings.WarningMessage], *, debug: bool) -> None:
    """Warnings raised during the run, one line each (after the run's own output)."""
    from synthrisk.exceptions import SynthriskWarning

    shown: set[str] = set()
    for w in caught:
        line = _one_line(str(w.message))
        if not issubclass(w.category, SynthriskWarning):
            line = f"{w.category.__name__}: {line}"
            if debug:
                line += f" ({w.filename}:{w.lineno})"
        if line not in shown:
            shown.add(line)
            print(f"synthrisk: warning: {line}", file=sys.stderr)


def _dispatch(args: argparse.Namespace) -> int:
    from synthrisk.cli._commands import COMMANDS, metrics
    from synthrisk.settings import config_context

    command = COMMANDS.get(args.command, metrics)
    workers = getattr(args, "workers", None)
    if workers is None:
        return command(args)
    with config_context(workers=workers):
        return command(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
