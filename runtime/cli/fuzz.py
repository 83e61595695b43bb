"""``swaycam fuzz``: seeded mutations of the real input files, each loaded, rigged, stepped,
posed and skinned; counts by format and outcome (issue 16; :mod:`runtime.eval.fuzz`)."""

from __future__ import annotations

import json

from .args import CommandError, add_command, add_json_option, count, positive

_DESCRIPTION = """Mutate real files of every JSON- and text-based input (VRM 0.x, VRM 1.0, plain glTF, .vrma,
OBJ hair from the shared assets) with seeded mutations (hostile JSON values, dropped keys, cut
arrays, hostile binary numbers, byte flips, truncations, OBJ tokens and lines); load each
mutant, rig it, step 30 substeps of a fast head turn, pose and skin it. Each outcome is 'ok'
(finite everywhere), 'refused' (a clear error naming the file and JSON path or line), or a
failure: 'crash' (any other exception), 'nonfinite' (NaN/inf posed, solved or skinned) or
'hang' (over --timeout seconds). Exit code 1 when any mutant fails.

    swaycam fuzz --count 10000 --workers 2            the long run (the CI test runs 500)
    swaycam fuzz --seed 0 --only 4711 -v              one mutant again, with its warnings

Mutant i of seed s is the same on every machine (the shared assets are read-only)."""

KINDS = ("vrm0", "vrm1", "gltf", "vrma", "obj")


def add_parser(sub) -> None:
    p = add_command(sub, "fuzz", run, help="load, rig and step seeded mutations of the real input files",
                    description=_DESCRIPTION)
    p.add_argument("--count", type=count(1), default=500, metavar="N", help="mutants 0..N-1 (default 500)")
    p.add_argument("--seed", type=count(0), default=0, metavar="S", help="the run's seed (default 0)")
    p.add_argument("--only", type=count(0), action="append", metavar="I",
                   help="run only mutant I (repeatable); --count is then ignored")
    p.add_argument("--workers", type=count(1, 64), default=2, metavar="N", help="worker processes (default 2)")
    p.add_argument("--kind", choices=KINDS, action="append", help="only these formats (repeatable; default all)")
    p.add_argument("--timeout", type=positive(3600), default=10.0, metavar="S",
                   help="a mutant taking longer is a hang (default 10 s)")
    add_json_option(p, "the counts and every failure")


def run(args) -> int:
    from ..eval.fuzz import run_fuzz

    try:
        report = run_fuzz(args.count, seed=args.seed, workers=args.workers, kinds=tuple(args.kind or ()) or None,
                          only=args.only, timeout_s=args.timeout)
    except RuntimeError as exc:
        raise CommandError(str(exc)) from None
    print(json.dumps(report.as_dict(), indent=1) if args.json else report.table())
    return 1 if report.failures else 0
