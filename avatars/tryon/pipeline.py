"""The try-on pipeline: hair mesh → fit → guides → scalp → join → rig → weights → avatar.

:func:`try_on` runs every step (docs/design.md §9) and returns a :class:`TryOnResult`: an ordinary
:class:`avatars.Avatar` with the hair mesh, joints, skin and springs added (what
``ChainSet.from_avatar`` runs like any rigged VRM hair), and the reports — the fit, the
guides (candidates, attached, joined, rejected, vertices missed), the chains.

Settings are in head heights of the target where they are lengths (the seed articles'
absolute thresholds, e.g. the 25 mm joining gap, are given at a human head of
:data:`REFERENCE_HEAD` metres and scaled with the target's head).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from avatars import Avatar, SpringLink
from avatars.hair import HairMesh
from avatars.materials import srgb_to_linear
from avatars.vrm1 import to_vrm1

from .assemble import assemble, hidden_springs
from .autorig import Chain, RigOptions, build_rig, size_hit_radii
from .errors import NoHeadError
from .fit import FitReport, fit_hair
from .flow import flow_alignment, flow_field
from .graph import build_graph
from .guide_export import GuideSet, guide_set
from .guides import Guide, GuideOptions, extract_guides
from .head import build_head
from .own_hair import find_own_hair
from .join import JoinOptions, JoinResult, join_fragments
from .scalp import Scalp, ScalpAttachment
from .sheets import Sheets, bend_limits, sheet_links
from .skin_contact import with_contact
from .weights import WeightOptions, body_anchor, hair_weights

log = logging.getLogger(__name__)

#: Head height (metres) at which the articles' absolute thresholds are stated.
REFERENCE_HEAD = 0.22
#: A guide whose flow alignment (:func:`avatars.tryon.flow.flow_alignment`) is below this runs
#: across the flow of its piece.
ACROSS_FLOW = 0.5
#: Bump when the pipeline's output changes for the same inputs (keys the disk cache).
#: 2: loose regions without a chain of their own follow the nearest chain; 3: long hair anchored
#: to the body; 4: closest points on a chain in fewer operations (last-bit differences); 5: fit
#: without an opening, own hair cut out of shared meshes, short chains, rigid compact pieces,
#: geodesic weights, sheet links; 6: wide hair resting on the body anchored to it (issue 33).
PIPELINE_VERSION = "6"


@dataclass(frozen=True)
class TryOnSettings:
    """Everything that changes the result (keys the cache with the two file digests).

    Attributes:
        placement: "auto" (keep a hair taken from this avatar, fit anything else), "fit", "keep".
        hide_own_hair: hide the avatar's own hair (:mod:`avatars.tryon.own_hair`): its meshes
            skinned only to the head and spring joints under it, or its triangles cut out of
            a mesh it shares with the face or body.
        color: sRGB (r, g, b) in [0, 1] for the hair, or None for the source's colour.
        attach_distance: farthest root from the scalp, head heights.
        join_distance: largest gap joined, metres at a :data:`REFERENCE_HEAD` head.
        join_dot: smallest tangent agreement to join.
        max_chains, min_joints, max_joints: chain limits (the articles: 24, joints 4–8).
        guides, rig, weights: the step options (guide lengths in metres at the reference
            head; rig and weight lengths in head heights).
    """

    placement: str = "auto"
    hide_own_hair: bool = True
    color: tuple[float, float, float] | None = None
    attach_distance: float = 0.2
    join_distance: float = 0.025
    join_dot: float = 0.5
    max_chains: int = 24
    min_joints: int = 4
    max_joints: int = 8
    guides: GuideOptions = GuideOptions()
    rig: RigOptions = RigOptions()
    weights: WeightOptions = WeightOptions()

    def digest(self) -> str:
        """Hex SHA-256 of the settings and :data:`PIPELINE_VERSION`."""
        text = json.dumps({"v": PIPELINE_VERSION, **asdict(self)}, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class GuideReport:
    """The guide, attachment and joining counts (the articles' audit numbers).

    Attributes:
        candidates: candidate guides.
        attached: guides attached to a scalp triangle directly.
        joined: fragments joined to an attached guide.
        rejected: candidates neither attached nor joined (their pieces stay on the head).
        vertices_missed: hair vertices in pieces that gave no guide (bound to the head).
        vertices_rejected: hair vertices in pieces held only by rejected guides.
        pieces: connected pieces of the welded hair graph.
        across_flow: attached or joined guides that run across the flow of their piece
            (:func:`avatars.tryon.flow.flow_alignment` below :data:`ACROSS_FLOW`): a surface path
            from the piece's top to a corner of a wide sheet; not wrong, but not a strand.
        reversed: of those, guides that run against the flow (tip to root).
        ambiguous_roots: attached guides whose both ends lie within the attach distance of the
            scalp (either could be the root: a lock lying on the head).
        ambiguous_joins: joined fragments another parent or direction could have continued
            almost as well (:data:`avatars.tryon.join.AMBIGUOUS_RATIO`).
    """

    candidates: int = 0
    attached: int = 0
    joined: int = 0
    rejected: int = 0
    vertices_missed: int = 0
    vertices_rejected: int = 0
    pieces: int = 0
    across_flow: int = 0
    reversed: int = 0
    ambiguous_roots: int = 0
    ambiguous_joins: int = 0

    def checks(self) -> dict:
        """The direction and ambiguity checks of the attached and joined guides (``checks`` of
        the summary): across the flow, reversed (tip to root), ambiguous roots, ambiguous joins."""
        return {"across_flow": self.across_flow, "reversed": self.reversed, "ambiguous_roots": self.ambiguous_roots,
                "ambiguous_joins": self.ambiguous_joins}

    @property
    def attached_share(self) -> float:
        """(attached + joined) / candidates (1 when there are none)."""
        return (self.attached + self.joined) / self.candidates if self.candidates else 1.0


@dataclass(frozen=True, eq=False)
class TryOnResult:
    """What :func:`try_on` made.

    Attributes:
        avatar: the avatar with the hair (None when the fit failed; see ``fit.problems``).
        fit: the :class:`FitReport`.
        guide_report: the :class:`GuideReport`.
        chains: the rigged :class:`Chain` s (root attachments, joint nodes).
        hair_instance: index of the hair's mesh instance in ``avatar.mesh_instances``.
        hair_vertices: vertices of the hair mesh.
        hidden: the avatar's own mesh instances that were hidden whole.
        own_hair: what of the avatar's own hair was found and hidden (the ``own_hair`` object
            of :meth:`summary`: found, hidden, methods, whole mesh instances, triangles — all,
            and cut out of meshes shared with the face or body —, the meshes cut, notes;
            :mod:`avatars.tryon.own_hair`).
        notes: rig remarks (torso capsule, chains left out...).
        seconds: wall time of the pipeline.
        sheets: which chains carry one connected sheet and their neighbour links
            (:class:`avatars.tryon.sheets.Sheets`; in the avatar as ``Spring.sheet``,
            ``SpringJoint.max_bend`` and ``Avatar.spring_links``).
        guides, attachments, join: the intermediate guides (for inspection and plots; not
            kept in the fit cache).
        guide_set: the guides as plain arrays (:class:`avatars.tryon.guide_export.GuideSet`:
            points, state, scalp triangles; kept in the fit cache) for the inspection views
            and ``swaycam hair guides``.
    """

    avatar: Avatar | None
    fit: FitReport
    guide_report: GuideReport = GuideReport()
    chains: tuple[Chain, ...] = ()
    hair_instance: int = -1
    hair_vertices: int = 0
    hidden: tuple[int, ...] = ()
    own_hair: dict = field(default_factory=lambda: {"found": False, "hidden": False})
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    guides: tuple[Guide, ...] = field(default=(), repr=False)
    attachments: tuple[ScalpAttachment | None, ...] = field(default=(), repr=False)
    join: JoinResult | None = field(default=None, repr=False)
    sheets: Sheets | None = field(default=None, repr=False)
    guide_set: GuideSet | None = field(default=None, repr=False)

    def summary(self) -> dict:
        """The ``swaycam hair fit --json`` object (without ``seconds``)."""
        g = self.guide_report
        joints = sum(len(c.nodes) for c in self.chains)
        return {
            "ok": self.avatar is not None and self.fit.ok,
            "guides": {"candidates": g.candidates, "attached": g.attached, "joined": g.joined, "rejected": g.rejected},
            "checks": g.checks(),
            "vertices_missed": g.vertices_missed, "chains": len(self.chains), "joints": joints,
            "sheets": 0 if self.sheets is None else self.sheets.count,
            "sheet_links": 0 if self.sheets is None else len(self.sheets.links),
            "hair_vertices": self.hair_vertices, "placement": self.fit.placement, "units": self.fit.units,
            "fit": self.fit.summary(),
            "own_hair": dict(self.own_hair),
            "problems": list(self.fit.problems), "notes": list(self.fit.notes) + list(self.notes),
        }


def own_hair_text(report: dict) -> str:
    """One line from the ``own_hair`` report (what was hidden, by which method, how many
    triangles), for logs and the CLI."""
    if not report.get("found"):
        return "none found (nothing hidden)"
    what = ", ".join(report.get("instances", []) + [f"{report.get('cut_triangles', 0)} triangles cut out of "
                                                   + "/".join(report.get("cut_from", []))] * bool(report.get("cut_from")))
    verb = "hidden" if report.get("hidden") else "re-rigged" if report.get("replaced") else "kept"
    return f"{verb}: {what} ({report.get('triangles', 0)} triangles; by {', '.join(report.get('methods', []))})"


def _with_sheets(avatar: Avatar, sheets: Sheets, n_new: int) -> Avatar:
    """The avatar with the try-on springs (its last ``n_new``) marked with their sheets and
    bend limits, and the sheets' neighbour links (:mod:`avatars.tryon.sheets`)."""
    from dataclasses import replace

    base = len(avatar.springs) - n_new
    springs = list(avatar.springs)
    for k in range(n_new):
        sp = springs[base + k]
        limits = bend_limits(len(sp.joints))
        springs[base + k] = replace(sp, sheet=int(sheets.sheet[k]) if len(sheets.sheet) else -1,
                                    joints=tuple(replace(j, max_bend=b) for j, b in zip(sp.joints, limits)))
    links = tuple(SpringLink(springs=(base + a, base + b), joints=jp, rest=rest, sheet=int(sheets.sheet[a]),
                             shared=n) for a, b, jp, rest, n in sheets.links)
    return replace(avatar, springs=tuple(springs), spring_links=avatar.spring_links + links)


def _retrace_unattached(graph, scalp: Scalp, guides: list[Guide], attachments: list, options: GuideOptions,
                        distance: float) -> tuple[list[Guide], list]:
    """Pieces none of whose guides reached the scalp but that come within ``distance`` of it
    are traced again from their node nearest the scalp (:func:`extract_guides` ``roots``): a
    bun at the side of the head touches it on its inner side, not at its top or bottom.
    Other guides are kept as they were."""
    ok = {}
    for g, a in zip(guides, attachments):
        ok[g.piece] = ok.get(g.piece, False) or a is not None
    redo = [q for q, v in ok.items() if not v]
    if not redo:
        return guides, attachments
    d = scalp.distance(graph.points)
    roots = {}
    for q in redo:
        members = np.nonzero(graph.component == q)[0]
        k = int(members[np.argmin(d[members])])
        if d[k] <= distance:
            roots[q] = k
    if not roots:
        return guides, attachments
    new, _ = extract_guides(graph, scalp.distance, options, pieces=np.array(sorted(roots)), roots=roots)
    new_att = scalp.attach(np.array([g.points[0] for g in new]).reshape(-1, 3), distance)
    keep = [i for i, g in enumerate(guides) if g.piece not in roots]
    return [guides[i] for i in keep] + new, [attachments[i] for i in keep] + new_att


def try_on(avatar: Avatar, hair: HairMesh, settings: TryOnSettings = TryOnSettings()) -> TryOnResult:
    """Fit ``hair`` on ``avatar``'s head and rig it (module doc).

    Returns a result whose ``avatar`` is None when the hair cannot be fitted (no head
    mesh, no humanoid head, hair far larger than the head, nowhere near it...); the
    reasons are in ``fit.problems``. Never raises for geometric problems.
    """
    t0 = time.perf_counter()
    s = settings
    same = hair.frame == "avatar-rest" and hair.path == avatar.path
    own = find_own_hair(avatar)
    hide = own.instances if s.hide_own_hair else ()
    cut = own.triangle_masks() if s.hide_own_hair else {}
    if same:   # the hair itself may be part of the avatar's own hair: never hide what is rebuilt
        hide = tuple(k for k in hide if k not in {o.instance for o in hair.origin})
        cut = {kp: m for kp, m in cut.items() if kp not in {(o.instance, o.primitive) for o in hair.origin}}
    own_report = own.summary(avatar, bool(hide or cut))
    if same and (own.instances or own.parts) and not (hide or cut):
        own_report["replaced"] = True
        own_report["notes"] = own_report["notes"] + ["the own hair is the hair rebuilt: replaced, not hidden"]
    try:
        exclude = dict(cut)
        if same:   # the hair being rebuilt is not part of the head: its own triangles
            for o in hair.origin:
                prim = avatar.meshes[avatar.mesh_instances[o.instance].mesh].primitives[o.primitive]
                m = np.zeros(len(prim.indices) // 3, bool)
                m[o.triangles] = True
                exclude[(o.instance, o.primitive)] = m | exclude.get((o.instance, o.primitive), False)
        # the springs the result drops (of the hair rebuilt, of the own hair hidden) are plain
        # bones there: what else they weigh on (stray face corners) is part of the head
        dropped = tuple(hair.cleared_springs if same else ()) + tuple(sorted(hidden_springs(avatar, hide, cut)))
        head = build_head(avatar, hide=hide, exclude_triangles=exclude, cleared_springs=dropped)
    except NoHeadError as exc:
        return TryOnResult(None, FitReport(ok=False, problems=(str(exc),)), seconds=time.perf_counter() - t0)
    positions, fit = fit_hair(hair, avatar, head, placement=s.placement)
    if not fit.ok:
        return TryOnResult(None, fit, seconds=time.perf_counter() - t0)
    if fit.dropped is not None and fit.dropped.any():   # closing faces inside the head (fit.py)
        hair, used = hair.subset(~fit.dropped)
        positions = positions[used]
    H = float(head.size[1])
    f = H / REFERENCE_HEAD
    scalp = Scalp(head)
    graph = build_graph(positions, hair.triangles, hair.weld)
    go = s.guides
    gopts = GuideOptions(spacing=go.spacing * f, min_length=go.min_length * f, step=go.step * f,
                         max_points=go.max_points, max_per_piece=go.max_per_piece, max_length=go.max_length * f,
                         smooth_passes=go.smooth_passes)
    guides, missed = extract_guides(graph, scalp.distance, gopts)
    roots = np.array([g.points[0] for g in guides]).reshape(-1, 3)
    attachments = scalp.attach(roots, s.attach_distance * H)
    guides, attachments = _retrace_unattached(graph, scalp, guides, attachments, gopts, s.attach_distance * H)
    attached = np.array([a is not None for a in attachments], bool)
    join = join_fragments(guides, attached, JoinOptions(distance=s.join_distance * f, min_dot=s.join_dot,
                                                         tangent_span=JoinOptions.tangent_span * f,
                                                         max_length=go.max_length * f))
    valid = attached | join.joined
    bound = np.zeros(graph.component_count, bool)
    for g, ok in zip(guides, valid):
        if ok:
            bound[g.piece] = True
    rej_pieces = np.zeros(graph.component_count, bool)
    for g, ok in zip(guides, valid):
        if not ok:
            rej_pieces[g.piece] = True
    rej_pieces &= ~bound
    vcount = np.bincount(graph.component[graph.node], minlength=graph.component_count)
    flow = flow_field(graph, -head.envelope.depth(graph.points), s.weights.band * H)
    align = np.array([flow_alignment(flow, graph, g.path) for g in guides]) if guides else np.zeros(0)
    ends = scalp.distance(np.array([g.points[-1] for g in guides]).reshape(-1, 3)) if guides else np.zeros(0)
    report = GuideReport(
        across_flow=int((valid & (align < ACROSS_FLOW)).sum()), reversed=int((valid & (align < 0.0)).sum()),
        ambiguous_roots=int((attached & (ends <= s.attach_distance * H)).sum()),
        ambiguous_joins=int(join.ambiguous.sum()) if join.ambiguous is not None else 0,
        candidates=len(guides), attached=int(attached.sum()), joined=int(join.joined.sum()),
        rejected=int((~valid).sum()), vertices_missed=int(missed[graph.node].sum()),
        vertices_rejected=int(vcount[rej_pieces].sum()), pieces=graph.component_count,
    )
    ro = s.rig
    rig_opts = RigOptions(max_chains=s.max_chains, min_joints=s.min_joints, max_joints=s.max_joints,
                          joint_spacing=ro.joint_spacing, min_loose=ro.min_loose, short_loose=ro.short_loose, band=s.weights.band,
                          separation=ro.separation, flow=ro.flow, attach=s.attach_distance,
                          hit_heads=ro.hit_heads, stiffness=ro.stiffness, drag=ro.drag,
                          gravity=ro.gravity)
    rig = build_rig(avatar, head, scalp, guides, attachments, join, rig_opts, graph=graph, flow=flow,
                    spacing=gopts.spacing, smoothing=(gopts.step, gopts.max_points, gopts.smooth_passes))
    anchor = body_anchor(graph, avatar, head, s.weights) if rig.chains else None
    skin_nodes, joints, weights, dense = hair_weights(graph, head, rig.chains, bound, s.weights, anchor)
    rig = size_hit_radii(rig, graph, dense, skin_nodes, H)
    sheets = sheet_links(graph, rig.chains, dense, skin_nodes, -head.envelope.depth(graph.points) > s.weights.band * H)
    color = None
    if s.color is not None:
        color = np.concatenate([srgb_to_linear(np.clip(s.color, 0, 1)), [1.0]])
    out = assemble(avatar, hair, positions, nodes=rig.nodes, skin_nodes=skin_nodes, joints=joints, weights=weights,
                   springs=rig.springs, colliders=rig.colliders, groups=rig.groups, hide=hide, hide_tris=cut,
                   strip_origin=same, color=color, name=f"TryOnHair_{hair.name}")
    out = _with_sheets(out, sheets, len(rig.springs))
    out = to_vrm1(out)   # what its VRM 1.0 export loads to, bit for bit (virtual tails become nodes)
    # per-vertex contact after skinning (swaycam's own: the export does not carry it)
    out, contact_notes = with_contact(out, len(out.mesh_instances) - 1, head)
    seconds = time.perf_counter() - t0
    log.info("try-on %s: %d candidates, %d attached, %d joined, %d rejected, %d chains, %.2f s; own hair: %s", hair.name,
             report.candidates, report.attached, report.joined, report.rejected, len(rig.chains), seconds,
             own_hair_text(own_report))
    return TryOnResult(
        avatar=out, fit=fit, guide_report=report, chains=tuple(rig.chains), hair_instance=len(out.mesh_instances) - 1,
        hair_vertices=hair.vertex_count, hidden=hide, own_hair=own_report,
        notes=tuple(rig.notes) + tuple(contact_notes), seconds=seconds,
        guides=tuple(guides), attachments=tuple(attachments), join=join, sheets=sheets,
        guide_set=guide_set(guides, attachments, join, out.head_node()),
    )
