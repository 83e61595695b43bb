"""The samples of a soak run (:mod:`runtime.eval.soak`) and its verdict: after the warm-up,
GL objects, file descriptors and threads the same at every sample of an avatar, and each
avatar's resident memory flat from visit to visit (:func:`visit_floors`, :meth:`SoakReport.check`).

Why visits and not samples (issue 34 finding 9: ``soak --duration 75`` said "NOT FLAT",
+5.4 MB, where 120 s was flat). Resident memory is not one number per avatar:

- within a visit it follows the run's state: compare mode on holds a companion rig and a
  second pane (+3.0 MB with the default avatar, +1.7 MB with Godette, measured with 1 s
  samples over 150 s), a solver switch or a closed extra output moves it by ~1 MB, and a
  sample right after a reload in compare mode read 469.8 MB where the default settled at
  463.3 within 1.9 s (what the swap frees and builds). Two single samples taken
  at different points of a visit differ by that, whatever a leak does; the 75 s run compared
  the default's sample right after a load (30 s) with one 10 s into its last visit (70 s);
- an avatar's first visit is lower than its later ones: the first Godette visit links six
  mesh program variants (:class:`render.shaders.Programs` keeps them for the context's
  life) and grows the C heap's mmap threshold, which the default's later visits keep
  (+14.6 MB for the default from its first visit to every later one, then 309.1 MB at visits
  2, 3 and 4 outside the session; 8.7 MB with a fixed mmap threshold). That is a one-off per
  avatar, not a leak.

So each visit is summed up by its *floor* (the lowest RSS of its samples: the cheapest
state it passed through), an avatar's first visit is left out, and the growth is its last
judged visit's floor minus its first's, compare mode off and on apart where the run saw
either in two visits (:func:`rss_growth`; ``soak --duration 120`` on this branch: the
default's floors 377.4, 381.2, 378.4, 381.3 MB at visits 2, 4, 6, 8 alternate with compare
mode, +3.9 MB first to last; off 377.4 -> 378.4, on 381.2 -> 381.3). A leak — anything that
outlives a reload, per frame or per load — raises every later floor in either state and
shows; the state of the moment does not.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: RSS growth allowed after warm-up, MB (the issue's goal for the hour: < 5 MB).
RSS_GROWTH_LIMIT_MB = 5.0
#: Seconds after a reload before a sample: the swapped-out rig and the new companion and
#: reduced meshes take under 2 s at load 10 on this machine (module doc).
SETTLE_S = 3.0


@dataclass(frozen=True)
class SoakOptions:
    """What the soak does and for how long (seconds of wall time)."""

    duration_s: float = 120.0
    sample_s: float = 5.0
    warmup_s: float = 30.0
    size: tuple[int, int] = (160, 96)
    fps: float = 30.0
    avatars: tuple[str, ...] = ("default", "godette")
    reload_s: float = 15.0
    solver_s: float = 5.0
    compare_s: float = 9.0
    output_s: float = 11.0
    output_open_s: float = 3.0
    settle_s: float = SETTLE_S

    def __post_init__(self):
        for name in ("duration_s", "sample_s", "reload_s", "solver_s", "compare_s", "output_s", "output_open_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"soak {name}: must be > 0")
        if not 0 <= self.settle_s < self.reload_s:
            raise ValueError("soak settle_s: must be >= 0 and shorter than reload_s")
        if not 0 <= self.warmup_s < self.duration_s:
            raise ValueError("soak warmup_s: must be >= 0 and shorter than the duration")


@dataclass
class Sample:
    """One measurement: ``t_s`` seconds into the run; ``reloads`` so far is the visit it
    belongs to (0: the avatar the run started with); ``compare``: compare mode was on."""

    t_s: float
    frames: int
    avatar: str
    rss_mb: float
    gl_objects: int
    fds: int
    threads: int
    reloads: int = 0
    solver_switches: int = 0
    compare_toggles: int = 0
    outputs_opened: int = 0
    compare: bool = False


@dataclass
class SoakReport:
    options: SoakOptions
    samples: list[Sample] = field(default_factory=list)
    gl_by_kind: dict = field(default_factory=dict)     # at the end
    seconds: float = 0.0

    def after_warmup(self) -> list[Sample]:
        return [s for s in self.samples if s.t_s >= self.options.warmup_s]

    def figures(self) -> dict:
        """Over the samples after warm-up, per avatar: first/last/min/max of each measure;
        ``visits``: [visit, floor RSS MB] of its judged visits (:func:`visit_floors`);
        ``rss_growth_mb`` and ``rss_growth_from`` (which visits, floors, compare state): its
        growth (:func:`rss_growth`; None with fewer than two judged visits); overall
        ``rss_growth_mb``: the largest of those (0.0 when none)."""
        w = self.after_warmup()
        if not w:
            return {}
        out = {"samples": len(w), "frames": self.samples[-1].frames, "from_s": w[0].t_s, "to_s": w[-1].t_s,
               "by_avatar": {}}
        floors = visit_floors(self.samples, self.options.warmup_s, self.options.avatars)
        growth = []
        for name in sorted({s.avatar for s in w}):
            a = [s for s in w if s.avatar == name]
            d = out["by_avatar"][name] = {"samples": len(a)}
            for key in ("rss_mb", "gl_objects", "fds", "threads"):
                v = [getattr(s, key) for s in a]
                d[key] = {"first": v[0], "last": v[-1], "min": min(v), "max": max(v)}
            f = floors.get(name, [])
            d["visits"] = [[k, round(v, 2)] for k, v in f]
            g = rss_growth(self.samples, self.options.warmup_s, self.options.avatars, name)
            d["rss_growth_mb"] = None if g is None else round(g["mb"], 2)
            d["rss_growth_from"] = g and {k: v for k, v in g.items() if k != "mb"}
            if d["rss_growth_mb"] is not None:
                growth.append(d["rss_growth_mb"])
        out["rss_growth_mb"] = max(growth) if growth else 0.0
        last = self.samples[-1]
        out["events"] = {"reloads": last.reloads, "solver_switches": last.solver_switches,
                         "compare_toggles": last.compare_toggles, "outputs_opened": last.outputs_opened}
        return out

    def check(self, rss_growth_limit_mb: float = RSS_GROWTH_LIMIT_MB) -> list[str]:
        """What is not flat after warm-up (empty: healthy)."""
        f = self.figures()
        if not f:
            return ["no sample after the warm-up"]
        problems = []
        for name, d in f["by_avatar"].items():
            for key in ("gl_objects", "fds", "threads"):
                if d[key]["max"] != d[key]["min"]:
                    problems.append(f"{key} with {name}: {d[key]['first']} -> {d[key]['last']} "
                                    f"(range {d[key]['min']}..{d[key]['max']})")
        if sum(d["samples"] > 1 for d in f["by_avatar"].values()) == 0:
            problems.append("no avatar was sampled twice after the warm-up (run longer)")
        elif all(d["rss_growth_mb"] is None for d in f["by_avatar"].values()):
            problems.append("no avatar was visited twice after its first visit and the warm-up (run longer)")
        for name, d in f["by_avatar"].items():
            if d["rss_growth_mb"] is not None and d["rss_growth_mb"] > rss_growth_limit_mb:
                g = d["rss_growth_from"]
                (k0, k1), (v0, v1) = g["visits"], g["floors"]
                problems.append(f"RSS with {name} grew {d['rss_growth_mb']:.1f} MB from visit {k0} to visit {k1} "
                                f"(floors {v0:.1f} -> {v1:.1f} MB, compare {g['compare']}; "
                                f"limit {rss_growth_limit_mb:g} MB)")
        return problems

    def as_dict(self) -> dict:
        return {"options": asdict(self.options), "seconds": round(self.seconds, 1), "figures": self.figures(),
                "problems": self.check(), "gl_by_kind": self.gl_by_kind, "samples": [asdict(s) for s in self.samples]}

    def table(self) -> str:
        lines = ["| t (s) | frames | avatar | RSS (MB) | GL objects | FDs | threads | reloads | solvers | compare | "
                 "outputs |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for s in self.samples:
            lines.append(f"| {s.t_s:.0f} | {s.frames} | {s.avatar} | {s.rss_mb:.1f} | {s.gl_objects} | {s.fds} | "
                         f"{s.threads} | "
                         f"{s.reloads} | {s.solver_switches} | {s.compare_toggles}{' (on)' if s.compare else ''} | "
                         f"{s.outputs_opened} |")
        f = self.figures()
        for name, d in (f.get("by_avatar") or {}).items():
            floors = ", ".join(f"{v:.1f}" for _, v in d["visits"]) or "none"
            growth = "not judged" if d["rss_growth_mb"] is None else f"{d['rss_growth_mb']:+.2f} MB"
            lines.append(f"after {self.options.warmup_s:g} s warm-up, {name} ({d['samples']} samples): RSS "
                         f"{d['rss_mb']['min']:.1f}..{d['rss_mb']['max']:.1f} MB, floors of its visits after "
                         f"the first {floors} MB ({growth}), GL objects "
                         f"{d['gl_objects']['min']}..{d['gl_objects']['max']}, "
                         f"FDs {d['fds']['min']}..{d['fds']['max']}, "
                         f"threads {d['threads']['min']}..{d['threads']['max']}")
        problems = self.check()
        lines.append("healthy" if not problems else "NOT FLAT: " + "; ".join(problems))
        return "\n".join(lines)


def visit_floors(samples: list[Sample], warmup_s: float, avatars: tuple[str, ...],
                 compare: bool | None = None) -> dict[str, list[tuple[int, float]]]:
    """Per avatar, (visit, floor) of each of its visits judged for growth, in time order:
    the visits (runs of samples with the same ``reloads``) at or after ``warmup_s`` but the
    avatar's first of the run (the run shows ``avatars`` in turn, one per visit: the first
    visit of ``avatars[i]`` is visit i); the floor is the lowest RSS of the visit's samples
    (MB), of those taken with compare mode ``compare`` only when given. Why floors and why
    not the first visit: the module doc."""
    floors: dict[str, dict[int, float]] = {}
    for s in samples:
        first = avatars.index(s.avatar) if s.avatar in avatars else 0
        if s.t_s < warmup_s or s.reloads <= first or compare is not None and s.compare != compare:
            continue
        per = floors.setdefault(s.avatar, {})
        per[s.reloads] = min(per.get(s.reloads, s.rss_mb), s.rss_mb)
    return {name: sorted(per.items()) for name, per in floors.items()}


def rss_growth(samples: list[Sample], warmup_s: float, avatars: tuple[str, ...], avatar: str) -> dict | None:
    """How much ``avatar``'s floor grew from its first judged visit to its last
    (:func:`visit_floors`), like with like: with compare mode off and on apart (compare mode
    holds ~3 MB more: the module doc), the larger growth of the two where either state was
    seen in two visits or more, else over all samples. Returns {"mb", "visits": [first,
    last], "floors": [MB, MB], "compare": "off"|"on"|"either"}, or None with fewer than two
    judged visits."""
    best = None
    for compare, label in ((False, "off"), (True, "on")):
        f = visit_floors(samples, warmup_s, avatars, compare).get(avatar, [])
        if len(f) > 1 and (best is None or f[-1][1] - f[0][1] > best["mb"]):
            best = {"mb": f[-1][1] - f[0][1], "visits": [f[0][0], f[-1][0]], "floors": [f[0][1], f[-1][1]],
                    "compare": label}
    if best is None:
        f = visit_floors(samples, warmup_s, avatars).get(avatar, [])
        if len(f) > 1:
            best = {"mb": f[-1][1] - f[0][1], "visits": [f[0][0], f[-1][0]], "floors": [f[0][1], f[-1][1]],
                    "compare": "either"}
    return best
