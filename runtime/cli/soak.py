"""``swaycam soak``: a long run that reloads, switches and toggles on a schedule and reports
memory, GL objects, file descriptors and threads over time (:mod:`runtime.eval.soak`)."""

from __future__ import annotations

import json

from .args import CommandError, add_command, add_json_option, positive

_DESCRIPTION = """Leave a headless live run going for --duration seconds at a small size (the turn-test track
played in real time, then held; the idle on the body) while the avatar is reloaded (the
generated default and Godette in turn), the solver switched, compare mode toggled and an
extra video output opened and closed on a schedule. Every --sample seconds it records the
resident memory, live GL objects, open file descriptors and threads (samples wait 3 s after
a reload). After --warmup seconds GL objects, FDs and threads must stay flat and the memory
grow less than --rss-limit MB from visit to visit of each avatar, its first visit left out
(each visit counted by its lowest sample: RSS follows compare mode and the rest of the run's
state within a visit, and an avatar's first visit precedes one-off growth): exit code 1
otherwise.

    swaycam soak --duration 120                 the CI run (2 minutes)
    swaycam soak --duration 3600 --json         the hour-long run (its figures: docs/history/runtime-notes.md)"""


def add_parser(sub) -> None:
    p = add_command(sub, "soak", run, help="long run with reloads and switches; memory, GL objects, FDs, threads",
                    description=_DESCRIPTION)
    p.add_argument("--duration", type=positive(7 * 24 * 3600), default=120.0, metavar="S",
                   help="seconds of wall time (default 120)")
    p.add_argument("--sample", type=positive(3600), default=5.0, metavar="S", help="seconds between samples (default 5)")
    p.add_argument("--warmup", type=positive(7 * 24 * 3600), default=30.0, metavar="S",
                   help="seconds before the measures must be flat (default 30)")
    p.add_argument("--rss-limit", type=positive(1e6), default=5.0, metavar="MB",
                   help="RSS growth allowed after the warm-up, per avatar, visit to visit (default 5 MB)")
    add_json_option(p, "every sample and the figures")


def run(args) -> int:
    from ..eval.soak import SoakOptions, soak

    try:
        opts = SoakOptions(duration_s=args.duration, sample_s=args.sample, warmup_s=args.warmup)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    report = soak(opts)
    problems = report.check(args.rss_limit)
    if args.json:
        d = report.as_dict()
        d["problems"] = problems
        print(json.dumps(d, indent=1))
    else:
        print(report.table())
    return 1 if problems else 0
