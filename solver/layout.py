"""Packed-array layout shared by the compiled kernels (:mod:`solver.kernels`) and the Python
side (:mod:`solver.chains`, :mod:`solver.build`), declared once as tables.

All solver state and parameters live in two flat buffers so that one substep is one compiled
call with three array arguments (``world``, ``F``, ``I``): a numba dispatch costs roughly
0.1-0.2 µs per array argument, which matters when a whole Godette substep is ~1 µs of work.
``I`` (int64) starts with a header of :data:`HDR` entries (counts, options, counters, section
offsets); after it, and in ``F`` (float64), come the sections.

Every section is one :class:`Section` below: a table of named :class:`Field` s (constant
name, Python view name, shape, unit and frame, meaning). From these tables, and nowhere
else, come

- the integer offset constants the kernels use (``S_X``, ``S_K``, ``C_WA``, ``H_S``...,
  and each section's row width ``SF_ST``, ``SF_PAR``, ``CF``...): plain module-level ints
  made at import, so numba folds them into the compiled code as constants, exactly like
  literals (a global int is frozen when a kernel is compiled);
- the named numpy views of the Python side (:func:`views`: ``params.k`` (S,),
  ``state.tails`` (S, 3), ``scratch.frame`` (S, 3, 4)...);
- the Markdown reference ``solver/LAYOUT.md`` (:func:`markdown`; ``python -m solver.layout``
  regenerates it, and a test fails when it disagrees with the tables).

A segment (simulated joint) has four sections, so that a parameter is written without
touching state and state without touching parameters: **state** (what the motion carries
from one substep to the next: tails, velocities, previous tails), **parameters** (k, c,
gravity, hit radius and the VRM values, with the quantities derived from them), **rest**
constants (the rest shape: offsets, relative frames, lengths) and **scratch** (written and
read within one substep). :data:`ROW_GROUPS` says which of them are blocks of their own in
``F`` and which share rows (column groups of one block, one row per segment); the kernels
read every arrangement the same way (``st[i, S_X]``, ``par[i, S_K]``, ``rst[i, S_B]``,
``scr[i, S_O]``), only the constants differ. Sections that share rows share their header
entry too (``H_OF_SCR`` is ``H_OF_ST``), so the compiled code sees one array, not two.

3x4 matrices are stored row-major (r00 r01 r02 t0 r10 r11 r12 t1 r20 r21 r22 t2),
column-vector convention (docs/design.md §3). Units: metres, seconds, radians; "model metres" are
metres at the avatar's authored scale, multiplied by the chain scale s at run time.
Changing this file recompiles the kernels (:mod:`solver.kernels.step` stamps it, :mod:`avatars.kernel_cache`).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import SolverError

#: Sections that share rows (section keys; column groups of one block, in this order, under
#: the first one's header entry); a section in no group is a block of its own. Chosen by
#: measurement (docs/history/solver-notes.md, frame with one call, paired in one process): the four
#: segment sections side by side in one row run at the speed of the old mixed row (0.99-1.00);
#: (state, scratch) and (params, rest) as two blocks cost 1.01; four blocks 1.02-1.08 (every
#: block is one more base pointer live in the link loops).
ROW_GROUPS: tuple[tuple[str, ...], ...] = (("state", "params", "rest", "scratch"),)


@dataclass(frozen=True)
class Field:
    """One named field of a section row.

    Attributes:
        const: the offset constant's name (``S_X``); its value is the field's first column.
        attr: the name of its numpy view on the Python side (``tails``).
        shape: () for a scalar, (3,) a vector, (3, 4) a 3x4 matrix...; width = product.
        unit: unit and frame ("m, world").
        doc: what it is.
    """

    const: str
    attr: str
    shape: tuple[int, ...]
    unit: str
    doc: str

    @property
    def width(self) -> int:
        return int(math.prod(self.shape))


@dataclass(frozen=True)
class Section:
    """A block of ``F`` or ``I``: ``rows`` rows of the fields, or with ``soa`` one run of
    ``rows`` values per field (struct of arrays).

    Attributes:
        key: its name in :func:`views` and :func:`pack` ("state", "params"...).
        title: heading of the docs.
        buffer: "F" (float64) or "I" (int64).
        rows: "S" segments, "C" colliders, "K" chains, "P" collider references, "M"
            affected nodes, "L" sheet links, "C+1", or "1" (one row).
        header: the header entry holding its offset (``H_OF_ST``); None for the header.
        width_const: the name of its row-width constant (``SF_ST``), or None.
        fields: the fields in storage order.
        soa: struct of arrays: field f's values for all rows start at f * rows.
        flat: one field of width 1 whose view is 1-D (rows,).
        doc: one paragraph for the docs.
    """

    key: str
    title: str
    buffer: str
    rows: str
    header: str | None
    width_const: str | None
    fields: tuple[Field, ...]
    soa: bool = False
    flat: bool = False
    doc: str = ""

    @property
    def width(self) -> int:
        return sum(f.width for f in self.fields)


def _f(const, attr, shape, unit, doc):
    return Field(const, attr, tuple(shape), unit, doc)


S3, M34, Q4 = (3,), (3, 4), (4,)

# ------------------------------------------------------------------ per segment, F
SEG_STATE = Section("state", "Segment state", "F", "S", "H_OF_ST", "SF_ST", (
    _f("S_X", "tails", S3, "m, world", "tail position x after the last substep"),
    _f("S_V", "velocities", S3, "m/s, world", "tail velocity v after the last substep"),
    _f("S_XP", "prev_tails", S3, "m, world",
       "tail one substep earlier (interpolation for drawing; the Verlet history in \"vrm\" mode)"),
), doc="What the motion carries from one substep to the next. Written by the step and reset kernels "
       "only (and by `ChainSet.copy_state_from`).")

SEG_PARAMS = Section("params", "Segment parameters", "F", "S", "H_OF_PAR", "SF_PAR", (
    _f("S_K", "k", (), "1/s²", "stiffness k toward the rest arc (rest-shape) or the parent-carried rest offset "
       "(legacy)"),
    _f("S_DAMP", "damp", (), "1", "exp(−c h), derived from c and the substep h"),
    _f("S_G", "gravity", S3, "model m/s², avatar frame", "gravity g (times the chain scale s at run time)"),
    _f("S_GPRE", "gravity_preload", S3, "model m/s², anchor's rest frame",
       "rest-shape gravity preload: the across-link part of g in the rest pose, derived from g and the rest "
       "direction (zero in legacy/vrm or without preload)"),
    _f("S_HIT", "hit_radius", (), "model m", "hit radius of the joint's own link (times s)"),
    _f("S_C", "c", (), "1/s", "damping rate c"),
    _f("S_VST", "vrm_stiffness", (), "1 (VRM)", "VRM stiffness (\"vrm\" mode)"),
    _f("S_VDRAG", "vrm_drag", (), "1 (VRM)", "VRM dragForce (\"vrm\" mode)"),
    _f("S_VEXT", "vrm_gravity", S3, "model m/s (VRM), avatar frame",
       "VRM gravityDir * gravityPower (\"vrm\" mode)"),
), doc="Spring parameters and what is derived from them alone. Changed in place by "
       "`ChainSet.set_params` / `set_overrides`, which never write state. Per-reference contact allowances "
       "(derived from the hit radius and the rest pose) have their own section.")

SEG_REST = Section("rest", "Segment rest constants", "F", "S", "H_OF_REST", "SF_REST", (
    _f("S_B", "rest_offset", S3, "model m, anchor's rest frame",
       "rest offset a_i in the anchor's local frame: R_H R_i⁰ (s a_i) = M_H b"),
    _f("S_L0", "length", (), "model m", "rest link length L (times s)"),
    _f("S_TLOC", "tail_local", S3, "file units, joint frame", "rest tail offset in the joint's own local frame"),
    _f("S_REL", "rel_frame", M34, "joint frame",
       "rest_world[simulated parent]⁻¹ @ rest_world[joint] (identity for a chain root)"),
), doc="The authored rest shape, fixed at build.")

SEG_SCRATCH = Section("scratch", "Segment scratch", "F", "S", "H_OF_SCR", "SF_SCR", (
    _f("S_O", "root", S3, "m, world", "the link's root at this substep (read by the relaxation)"),
    _f("S_LEN", "length", (), "m", "the link's length at this substep"),
    _f("S_UNR", "unresolved", (), "count", "collider references the link still overlaps (> tolerance) after its "
       "contact passes"),
    _f("S_NCONV", "not_converged", (), "flag", "1 when the link's last contact passes did not converge"),
    _f("S_W", "frame", M34, "world", "solved world frame of the joint at this substep, kept only where a child "
       "reads it (SI_NEEDW; written before it is read; the pose kernel recomputes all frames for drawing)"),
), doc="Written and read within one substep (and by the diagnostics after it); never carried over.")

SEGMENT_SECTIONS = (SEG_STATE, SEG_PARAMS, SEG_REST, SEG_SCRATCH)

POSE = Section("pose", "Pose scratch (drawing)", "F", "S", "H_OF_POSE", "PF", (
    _f("P_W", "frames", M34, "world", "posed world frame (from interpolated tails)"),
    _f("P_D", "corrections", M34, "world", "world correction W_posed @ inverse(W_input)"),
    _f("P_Q", "local_rotations", Q4, "xyzw, parent frame", "local rotation for skinning"),
    _f("P_RQ", "rest_rotations", Q4, "xyzw, parent frame", "rest local rotation (constant)"),
), doc="Written by the pose kernel for drawing; never read by the simulation.")

# ------------------------------------------------------------------ per collider, chain; globals (F)
COLLIDER = Section("colliders", "Colliders", "F", "C", "H_OF_COL", "CF", (
    _f("C_OFF", "offset", S3, "node units, collider-node frame", "head / centre / plane point"),
    _f("C_TAIL", "tail", S3, "node units, collider-node frame", "capsule tail (= offset otherwise)"),
    _f("C_RAD", "radius", (), "node units", "radius"),
    _f("C_NRM", "normal", S3, "collider-node frame", "plane normal"),
    _f("C_WA", "world_head", S3, "m, world", "world head at this substep"),
    _f("C_WB", "world_tail", S3, "m, world", "world tail at this substep"),
    _f("C_WR", "world_radius", (), "m", "world radius at this substep"),
    _f("C_WN", "world_normal", S3, "world", "world unit plane normal at this substep"),
    _f("C_BC", "bound_centre", S3, "m, world", "bounding-sphere centre"),
    _f("C_BR", "bound_radius", (), "m", "bounding-sphere radius (−1: unbounded, planes)"),
), doc="Shape data (first four fields, fixed at build) and its world placement at the last substep.")

CHAIN = Section("chains", "Chains", "F", "K", "H_OF_CH", "KF", (
    _f("K_APREV", "anchor_prev", S3, "m, world", "state: anchor position at the previous substep (teleport test)"),
    _f("K_CPREV", "centre_prev", M34, "world", "state: VRM centre-node world matrix at the previous substep"),
    _f("K_AMPREV", "anchor_matrix_prev", M34, "world", "state: anchor world matrix at the previous substep "
       "(speed limits)"),
    _f("K_DET0", "anchor_det0", (), "1", "rest: |det| of the anchor's rest world 3x3"),
    _f("K_S", "scale", (), "1", "state: the chain scale s (cube root of the determinant ratio) at the last substep"),
    _f("K_REACH", "reach", (), "model m", "parameter-derived: rest length of the chain + its largest hit radius "
       "(not read by the kernels)"),
    _f("K_VLIM", "speed_limit", (), "model m/s", "option: anchor speed above which the excess motion carries the "
       "chain rigidly (inf: off; times the chain scale s in the kernel)"),
    _f("K_WLIM", "rotation_speed_limit", (), "rad/s", "option: anchor angular speed above which the excess turn "
       "carries the chain rigidly (inf: off)"),
), doc="Per chain: state (carried from substep to substep), a rest constant, a parameter-derived reach and "
       "the speed-limit options fixed at build, see each field.")

#: The chain fields that are motion state (taken over by ``ChainSet.copy_state_from``).
CHAIN_STATE = ("anchor_prev", "centre_prev", "anchor_matrix_prev", "scale")

GLOBALS = Section("globals", "Globals", "F", "1", "H_OF_G", "GF", (
    _f("G_H", "h", (), "s", "substep (1/120 for the runtime)"),
    _f("G_TELEPORT", "teleport", (), "model m per substep", "automatic reset distance"),
    _f("G_CONTACT_TOL", "contact_tolerance", (), "m", "overlap below this counts as resolved (diagnostics)"),
    _f("G_U_MIN", "u_min", (), "1", "smallest contact parameter u used to lever a segment push to its tail"),
    _f("G_BEND_MAX", "bend_max", (), "rad", "relaxation: largest bend of a link off its parent's rest continuation"),
    _f("G_BEND_COS", "bend_cos", (), "1", "cos(G_BEND_MAX)"),
    _f("G_BEND_WP", "bend_parent_share", (), "1", "relaxation: share of an excess bend taken by the parent link"),
), doc="Options fixed at build.")

ALLOWANCE = Section("allowances", "Contact allowances", "F", "P", "H_OF_PAIRF", None, (
    _f("PF_ALLOW", "allowance", (), "model m", "overlap of the (segment, collider) reference in the authored rest "
       "pose that contact allows (rest_overlap=\"allow\"; 0 otherwise); derived from the hit radius"),
), flat=True, doc="One per collider reference, in the order of the reference list.")

COVER = Section("cover", "Contact cover allowances", "F", "P", "H_OF_PAIRC", None, (
    _f("PC_COVER", "cover", (), "model m", "part of the allowance that undoes a hit radius raised to cover the drawn "
       "hair (solver/drawn.py) for this reference; also taken off the radius of the root test (0: none)"),
), flat=True, doc="One per collider reference, in the order of the reference list (BuildOptions.cover_mesh).")

BOUNDS = Section("bounds", "Collider bounds", "F", "C", "H_OF_CB", None, (
    _f("CB_X", "x", (), "m, world", "bounding-sphere centre x"),
    _f("CB_Y", "y", (), "m, world", "centre y"),
    _f("CB_Z", "z", (), "m, world", "centre z"),
    _f("CB_R", "r", (), "m", "radius (inf: planes)"),
), soa=True, doc="Struct of arrays (field f of collider c at f·C + c), so the broad phase tests four colliders per "
                 "vector instruction. Scratch, written with the colliders each substep.")

# ------------------------------------------------------------------ external forces and angle limits (F)
EXTERNAL = Section("external", "Segment external forces and angle limits", "F", "S", "H_OF_EXT", "XF", (
    _f("X_WIND", "wind_response", (), "1/s", "wind response (drag per unit mass): the tail's acceleration per m/s of "
       "wind (solver.kernels.forces)"),
    _f("X_LKIND", "limit_kind", (), "LIMIT_*", "angle limit of the joint's link: 0 none, 1 cone, 2 hinge, 3 spherical "
       "(solver.kernels.limits)"),
    _f("X_LA", "limit_angle", (), "rad", "cone / hinge angle, or the spherical limit's pitch (at most π)"),
    _f("X_LB", "limit_yaw", (), "rad", "the spherical limit's yaw (at most π/2)"),
    _f("X_LCOS", "limit_cos", (), "1", "cos(limit_angle)"),
    _f("X_LQ", "limit_frame", (3, 3), "joint's rest local frame",
       "limit space -> the joint's rest local frame (columns: the limit's axes): axisRotation · rotation of the "
       "VRMC_springBone_limit draft"),
), doc="What acts on a joint from outside its spring: its wind response and its angle limit. Fixed at build "
       "(`solver.limits`, `solver.wind`).")

FORCES = Section("forces", "External forces", "F", "1", "H_OF_FRC", "WF", (
    _f("W_ON", "active", (), "flag", "1: the substep applies wind or an impulse (0: no external force, no cost)"),
    _f("W_NLIM", "limited", (), "count", "segments with an angle limit (0: the limit pass is skipped)"),
    _f("W_M0", "mean_from", S3, "m/s, world", "mean wind at the start of the current ramp"),
    _f("W_M1", "mean_to", S3, "m/s, world", "mean wind the ramp eases to"),
    _f("W_G0", "gusts_from", (), "1", "gust share at the start of the ramp"),
    _f("W_G1", "gusts_to", (), "1", "gust share the ramp eases to (0..1 of the mean)"),
    _f("W_N0", "ramp_start", (), "substeps", "substep count (I[H_N_STEPS]) at the start of the ramp"),
    _f("W_NR", "ramp_steps", (), "substeps", "length of the ramp (smoothstep)"),
    _f("W_GF", "gust_freq", (4,), "rad/s", "angular frequencies of the four seeded gusts"),
    _f("W_GP", "gust_phase", (4,), "rad", "their phases"),
    _f("W_SF", "sway_freq", (), "rad/s", "angular frequency of the sideways sway"),
    _f("W_SP", "sway_phase", (), "rad", "its phase"),
    _f("W_IMP", "impulse", S3, "m/s, world", "velocity change waiting for the next substep (an impulse)"),
    _f("W_WIND", "wind", S3, "m/s, world", "the wind of the last substep"),
), doc="Global wind and impulses (`solver.wind`, `solver.kernels.forces`): written between substeps by "
       "`solver.wind.set_wind` / `impulse`; the wind's clock is the substep count times h.")

# ------------------------------------------------------------------ I sections
SEG_INT = Section("segment_ints", "Segment indices and flags", "I", "S", "H_OI_SEG", "SI", (
    _f("SI_NODE", "node", (), "node index", "the joint's node"),
    _f("SI_SPAR", "parent", (), "segment index", "nearest simulated ancestor segment, −1 when it hangs from the body"),
    _f("SI_CHAIN", "chain", (), "chain index", "its chain"),
    _f("SI_P0", "pair_begin", (), "reference index", "collider references pairs[P0:P1]"),
    _f("SI_P1", "pair_end", (), "reference index", "end of its references"),
    _f("SI_AUTH", "authored", (), "flag", "1: authored (the animation drives it; the solver follows)"),
    _f("SI_FAST", "fast", (), "flag", "1: rest-shape joint at its simulated parent's tail: its root is that tail "
       "(the fast path)"),
    _f("SI_NEEDW", "needs_frame", (), "flag", "1: its solved frame S_W is needed in the substep (a child reads it)"),
    _f("SI_REFMASK", "ref_mask", (), "bits", "bit c: collider c is referenced (0 when > 63 colliders or a collider "
       "is referenced twice: the broad phase then walks the references)"),
))

COLLIDER_INT = Section("collider_ints", "Collider indices", "I", "C", "H_OI_COL", "CI", (
    _f("CI_NODE", "node", (), "node index", "collider node (−1: world)"),
    _f("CI_SHAPE", "shape", (), "SHAPE_*", "shape code"),
))

CHAIN_INT = Section("chain_ints", "Chain indices", "I", "K", "H_OI_CH", "KI", (
    _f("KI_ANCHOR", "anchor", (), "node index",
       "anchor: nearest non-simulated ancestor of the first joint (−1: world)"),
    _f("KI_CENTER", "center", (), "node index", "VRM centre node (−1: world)"),
    _f("KI_SEG0", "first", (), "segment index", "segments [SEG0, SEG1) in processing order"),
    _f("KI_SEG1", "end", (), "segment index", "end of its segments"),
))

PAIRS = Section("pairs", "Collider references", "I", "P", "H_OI_PAIR", None, (
    _f("PR_COL", "collider", (), "collider index", "collider of the reference (CSR list, per segment sorted)"),
), flat=True)

AFFECTED = Section("affected", "Affected nodes", "I", "M", "H_OI_AFF", "AI", (
    _f("A_NODE", "node", (), "node index", "a simulated joint or a descendant of one"),
    _f("A_SEG", "segment", (), "segment index", "the nearest simulated joint at or above it"),
), doc="Nodes `apply` patches.")

CANDIDATES = Section("candidates", "Candidate scratch", "I", "C+1", "H_OI_CAND", None, (
    _f("CA_PAIR", "pair", (), "reference index", "candidate pairs of the link being stepped"),
), flat=True, doc="Scratch of the broad phase.")

# ------------------------------------------------------------------ linked sheets (solver/sheets.py)
SHEET_LINKS = Section("sheet_links", "Sheet links", "F", "L", "H_OF_LINK", "LF", (
    _f("LF_REST", "rest", (), "model m", "rest distance of the two tails (times the chain scale s)"),
    _f("LF_KEEP", "keep", (), "1", "exp(−r h): the share of a link's error (and of its separating velocity) kept "
       "per substep, from the sheet rate r (1/s) and the substep h"),
    _f("LF_MAXR", "max_ratio", (), "1", "stretch cap: largest distance / rest distance (1 + max stretch; inf: none)"),
    _f("LF_MINR", "min_ratio", (), "1", "squish cap: smallest distance / rest distance (1 − max squish; 0: none)"),
    _f("LF_OFF", "offset", S3, "model m, anchor rest frame",
       "rest offset of tail b from tail a in the rest frame of chain a's anchor (the sheet's shape)"),
    _f("LF_KEEPS", "keep_shear", (), "1", "exp(−r_s h): the share of the sideways part of a link's error (across "
       "its rest offset) kept per substep, from the shear rate r_s (1/s)"),
), doc="One per sideways link between the tails of two segments of neighbouring chains (a linked sheet).")

SHEET_LINK_INT = Section("sheet_link_ints", "Sheet link ends", "I", "L", "H_OI_LINK", "LI", (
    _f("LI_A", "a", (), "segment index", "first tail of the link"),
    _f("LI_B", "b", (), "segment index", "second tail (another chain)"),
))

SHEET_CHAIN_INT = Section("sheet_chain_ints", "Sheet chain scratch", "I", "K", "H_OI_SHK", "KL", (
    _f("KL_OK", "linkable", (), "flag", "scratch: 1 when the chain can be relaxed this substep (every joint on the "
       "fast path or a chain root, none authored)"),
    _f("KL_MOVED", "first_moved", (), "segment index", "scratch: first segment a link moved in this pass (end of "
       "the chain: none)"),
    _f("KL_TOUCHED", "touched", (), "flag", "scratch: 1 when a link moved the chain in this substep (its angle limits "
       "are applied again)"),
), doc="Written and read within the sheet pass of one substep.")

F_SECTIONS = SEGMENT_SECTIONS + (COLLIDER, CHAIN, GLOBALS, POSE, ALLOWANCE, COVER, BOUNDS, EXTERNAL, FORCES, SHEET_LINKS)
I_SECTIONS = (SEG_INT, COLLIDER_INT, CHAIN_INT, PAIRS, AFFECTED, CANDIDATES, SHEET_LINK_INT, SHEET_CHAIN_INT)
SECTIONS = F_SECTIONS + I_SECTIONS

_BY_KEY = {s.key: s for s in SECTIONS}


def _group(sec: Section) -> tuple[Section, ...]:
    """The row group of ``sec`` (itself alone when it shares rows with nothing)."""
    for g in ROW_GROUPS:
        if sec.key in g:
            return tuple(_BY_KEY[k] for k in g)
    return (sec,)


def _check_groups() -> None:
    seen = set()
    for g in ROW_GROUPS:
        secs = [_BY_KEY[k] for k in g]
        if len({(s.buffer, s.rows, s.soa, s.flat) for s in secs}) != 1 or secs[0].soa or secs[0].flat:
            raise SolverError(f"layout: row group {g} mixes buffers, row counts or kinds")
        if seen & set(g):
            raise SolverError(f"layout: a section is in two row groups: {g}")
        seen |= set(g)


_check_groups()

# ------------------------------------------------------------------ I header
HEADER = Section("header", "Header of I", "I", "1", None, None, (
    _f("H_S", "segments", (), "count", "S: segments (simulated joints)"),
    _f("H_C", "colliders", (), "count", "C: colliders"),
    _f("H_K", "chains", (), "count", "K: chains"),
    _f("H_P", "pairs", (), "count", "P: collider references (pairs) in the CSR list"),
    _f("H_M", "affected", (), "count", "M: affected nodes (simulated joints and their descendants) for apply()"),
    _f("H_MODE", "mode", (), "MODE_*", "the solver"),
    _f("H_MAXIT", "contact_passes", (), "count", "contact projection passes per substep"),
    _f("H_RELAX", "relax_passes", (), "count", "rest-shape: chain relaxation passes after a contact (0: off)"),
    _f("H_N_AUTO_RESET", "auto_resets", (), "count", "counter: automatic (teleport) resets"),
    _f("H_N_STEPS", "steps", (), "count", "counter: substeps performed"),
    _f("H_N_CONTACT", "contacts", (), "count", "last substep: contact corrections applied"),
    _f("H_N_UNRESOLVED", "unresolved", (), "count", "last substep: links still overlapping a collider after the "
       "passes"),
    _f("H_N_ROOT_INSIDE", "root_inside", (), "count", "last substep: (link, collider) pairs whose root is inside "
       "(tail-only test)"),
    _f("H_N_CONTACT_TOTAL", "contacts_total", (), "count", "counter: contact corrections since construction"),
    _f("H_L", "links", (), "count", "L: sheet links"),
    _f("H_SHEET_PASSES", "sheet_passes", (), "count", "rest-shape: sheet passes per substep (links, then lengths and "
       "contact of the chains they moved)"),
    _f("H_N_STRETCH_CAP", "stretch_caps", (), "count", "last substep: sheet links held at their stretch cap"),
    _f("H_N_SQUISH_CAP", "squish_caps", (), "count", "last substep: sheet links held at their squish cap"),
    _f("H_N_CAP_TOTAL", "caps_total", (), "count", "counter: sheet-link cap bindings (link and pass) since "
       "construction"),
) + tuple(_f(s.header, "offset_" + s.key, (), f"index into {s.buffer}",
             "offset of the " + " / ".join(m.title.lower() for m in _group(s)))
          for s in SECTIONS if _group(s)[0] is s),
    doc="Counts, options, counters, then the offset of every block (sections sharing rows share one).")

#: Entries reserved for the header (the table's entries, then zeros).
HDR_RESERVED = 48

MODE_REST_SHAPE = 0
MODE_LEGACY = 1
MODE_VRM = 2
MODES = {"rest-shape": MODE_REST_SHAPE, "legacy": MODE_LEGACY, "vrm": MODE_VRM}  # keys: solver.modes.SolverMode

SHAPE_SPHERE = 0
SHAPE_CAPSULE = 1
SHAPE_INSIDE_SPHERE = 2
SHAPE_INSIDE_CAPSULE = 3
SHAPE_PLANE = 4
LIMIT_NONE = 0
LIMIT_CONE = 1
LIMIT_HINGE = 2
LIMIT_SPHERICAL = 3
LIMITS = {"none": LIMIT_NONE, "cone": LIMIT_CONE, "hinge": LIMIT_HINGE, "spherical": LIMIT_SPHERICAL}

SHAPES = {"sphere": SHAPE_SPHERE, "capsule": SHAPE_CAPSULE, "inside_sphere": SHAPE_INSIDE_SPHERE,
          "inside_capsule": SHAPE_INSIDE_CAPSULE, "plane": SHAPE_PLANE}

_ROW_COUNTS = {"S": "H_S", "C": "H_C", "K": "H_K", "P": "H_P", "M": "H_M", "L": "H_L"}


# ------------------------------------------------------------------ derived constants
def _offsets() -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """(field constant -> column, section key -> row stride, section key -> first column),
    with the sections of a :data:`ROW_GROUPS` entry side by side in one row."""
    cols: dict[str, int] = {}
    stride: dict[str, int] = {}
    first: dict[str, int] = {}
    for sec in (HEADER,) + SECTIONS:
        group = _group(sec)
        start = sum(m.width for m in group[:group.index(sec)])
        stride[sec.key] = sum(m.width for m in group)
        first[sec.key] = start
        for f in sec.fields:
            if f.const in cols:
                raise SolverError(f"layout: field constant {f.const} declared twice")
            cols[f.const] = start
            start += f.width
    for sec in SECTIONS:
        if _group(sec)[0] is not sec:
            cols[sec.header] = cols[_group(sec)[0].header]     # one header entry per block
    return cols, stride, first


_COLS, _STRIDE, _FIRST = _offsets()
if len(HEADER.fields) > HDR_RESERVED:
    raise SolverError(f"layout: {len(HEADER.fields)} header entries do not fit in {HDR_RESERVED}")
globals().update(_COLS)
globals().update({s.width_const: _STRIDE[s.key] for s in SECTIONS if s.width_const})
HDR = HDR_RESERVED

#: Every derived constant: field offsets, row widths (and HDR), as {name: int}.
CONSTANTS: dict[str, int] = {**_COLS, **{s.width_const: _STRIDE[s.key] for s in SECTIONS if s.width_const},
                             "HDR": HDR}


def stride(section: Section) -> int:
    """Row stride of ``section`` in its buffer (its width, or its row group's)."""
    return _STRIDE[section.key]


def row_count(section: Section, I: np.ndarray) -> int:  # noqa: E741
    """Rows of ``section`` in the buffers whose header is ``I``."""
    if section.rows == "1":
        return 1
    sym, _, plus = section.rows.partition("+")
    return int(I[_COLS[_ROW_COUNTS[sym]]]) + (int(plus) if plus else 0)


def section_size(section: Section, rows: int) -> int:
    """Number of buffer entries ``section`` takes with ``rows`` rows."""
    return rows * stride(section)


# ------------------------------------------------------------------ packing
def pack(counts: dict[str, int], blocks: dict[str, np.ndarray],
         header: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """The buffers ``F`` (float64) and ``I`` (int64) for the given section contents.

    Args:
        counts: {"S", "C", "K", "P", "M"} row counts, and "L" (sheet links; 0 when left out).
        blocks: {section key: array} with ``(rows, section.width)`` values (or (rows,) for
            flat sections, (width, rows) for struct-of-arrays ones); a missing key is zeros.
        header: {header constant: value} for the counts' entries beyond S C K P M (mode,
            passes...).

    Blocks follow :data:`F_SECTIONS` / :data:`I_SECTIONS` order; the sections of a
    :data:`ROW_GROUPS` entry are column groups of one block, placed at the first one.

    Raises:
        SolverError (a ValueError): a block whose shape does not match its section.
    """
    hdr = np.zeros(HDR, np.int64)
    for sym, const in _ROW_COUNTS.items():
        hdr[_COLS[const]] = counts.get(sym, 0)
    for const, value in header.items():
        hdr[_COLS[const]] = value

    def rows_of(sec):
        return row_count(sec, hdr)

    def block(sec):
        r = rows_of(sec)
        arr = blocks.get(sec.key)
        dtype = np.float64 if sec.buffer == "F" else np.int64
        want = (r,) if sec.flat else (sec.width, r) if sec.soa else (r, sec.width)
        if arr is None:
            return np.zeros(want, dtype)
        arr = np.asarray(arr, dtype)
        if arr.shape != want and not (arr.size == 0 and math.prod(want) == 0):
            raise SolverError(f"layout.pack: section {sec.key!r} has shape {arr.shape}, expected {want}")
        return arr.reshape(want)

    def place(sections, start):
        parts, offsets, pos = [], {}, start
        for sec in sections:
            group = _group(sec)
            if group[0] is not sec:
                continue                      # placed with the first section of its group
            parts.append((np.hstack([block(m) for m in group]) if len(group) > 1 else block(sec)).ravel())
            offsets[sec.header] = pos
            pos += parts[-1].size
        return parts, offsets, pos

    f_parts, f_off, f_end = place(F_SECTIONS, 0)
    i_parts, i_off, i_end = place(I_SECTIONS, HDR)
    for const, pos in {**f_off, **i_off}.items():
        hdr[_COLS[const]] = pos
    F = np.ascontiguousarray(np.concatenate(f_parts) if f_end else np.zeros(0), np.float64)
    I = np.concatenate([hdr] + i_parts).astype(np.int64)  # noqa: E741
    return F, I


# ------------------------------------------------------------------ Python views
class Block:
    """Named numpy views of one section (attributes = the fields' ``attr`` names).

    A view is a window into the packed buffer: write through it (``block.k[:] = 5.0``,
    ``block.tails[i] = x``); rebinding an attribute is refused. Shapes: (rows,) + the
    field's shape; one-row sections (globals) drop the row axis (a scalar field is a 0-d
    view: ``g.h[()]``); flat sections are the 1-D array itself (``block.allowance``).
    """

    __slots__ = ("_section", "_array", "_views")

    def __init__(self, section: Section, array: np.ndarray, views: dict[str, np.ndarray]):
        object.__setattr__(self, "_section", section)
        object.__setattr__(self, "_array", array)
        object.__setattr__(self, "_views", views)

    @property
    def section(self) -> Section:
        return self._section

    @property
    def array(self) -> np.ndarray:
        """The section's columns: (rows, width), (width, rows) for struct of arrays, (rows,)
        flat (field offsets in it: the constant minus the section's first column when it
        shares rows)."""
        return self._array

    def __getattr__(self, name: str) -> np.ndarray:
        try:
            return self._views[name]
        except KeyError:
            raise AttributeError(f"section {self._section.key!r} has no field {name!r} "
                                 f"(fields: {', '.join(self._views)})") from None

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(f"{self._section.key}.{name}: assign into the view ({self._section.key}.{name}[...] = "
                             "value), the view itself cannot be replaced")

    def __dir__(self):
        return list(self._views) + ["section", "array"]

    def __repr__(self) -> str:
        return f"<layout.Block {self._section.key}: {', '.join(self._views)}>"


def block_array(section: Section, F: np.ndarray, I: np.ndarray) -> np.ndarray:  # noqa: E741
    """The block of ``section`` in the buffers (a view; see :attr:`Block.array`): its own
    columns only when it shares rows with other sections."""
    buf = F if section.buffer == "F" else I
    of = int(I[_COLS[section.header]])
    r = row_count(section, I)
    if section.flat:
        return buf[of:of + r]
    if section.soa:
        return buf[of:of + section.width * r].reshape(section.width, r)
    st = stride(section)
    c0 = _FIRST[section.key]
    return buf[of:of + r * st].reshape(r, st)[:, c0:c0 + section.width]


def views(section: Section, F: np.ndarray, I: np.ndarray) -> Block:  # noqa: E741
    """Named views of ``section`` in the buffers ``F`` / ``I`` (see :class:`Block`)."""
    arr = block_array(section, F, I)
    out: dict[str, np.ndarray] = {}
    if section.flat:
        out[section.fields[0].attr] = arr
        return Block(section, arr, out)
    for k, f in enumerate(section.fields):
        if section.soa:
            out[f.attr] = arr[k]
            continue
        c = _COLS[f.const] - _FIRST[section.key]
        if section.rows == "1":
            out[f.attr] = arr[0, c:c + f.width].reshape(f.shape)
        else:
            out[f.attr] = arr[:, c:c + f.width].reshape((arr.shape[0],) + f.shape)
    return Block(section, arr, out)


def all_views(F: np.ndarray, I: np.ndarray) -> dict[str, Block]:  # noqa: E741
    """{section key: :func:`views`} for every section."""
    return {s.key: views(s, F, I) for s in SECTIONS}


# ------------------------------------------------------------------ docs
def _shape_text(shape) -> str:
    return "1" if shape == () else "×".join(str(n) for n in shape)


def markdown() -> str:
    """The layout reference (solver/LAYOUT.md), generated from the tables."""
    out = [
        "# Packed solver layout",
        "",
        "Generated from the tables in `solver/layout.py` by `python -m solver.layout`; do not edit by hand",
        "(a test compares this file with the tables). Offsets are columns inside a row (struct-of-arrays",
        "sections: the field index; field f of row r at f·rows + r). Row groups (sections side by side in one",
        "row): " + (", ".join("(" + ", ".join(g) + ")" for g in ROW_GROUPS) or "none") + ".",
        "",
    ]
    for sec in (HEADER,) + SECTIONS:
        rows = "one row" if sec.rows == "1" else f"{sec.rows} rows"
        kind = ", struct of arrays" if sec.soa else ", flat" if sec.flat else ""
        width = f", stride `{sec.width_const}` = {_STRIDE[sec.key]}" if sec.width_const else ""
        group = _group(sec)
        if len(group) > 1:
            width += (f", columns {_FIRST[sec.key]}–{_FIRST[sec.key] + sec.width - 1} of rows shared with "
                      + ", ".join(m.key for m in group if m is not sec))
        where = f", offset in `I[{sec.header}]`" if sec.header else f", at I[0], `HDR` = {HDR} entries reserved"
        out.append(f"## {sec.title} (`{sec.key}`)")
        out.append("")
        out.append(f"`{sec.buffer}`, {rows} of {sec.width}{kind}{width}{where}.")
        if sec.doc:
            out.append(sec.doc)
        out.append("")
        out.append("| constant | offset | view | shape | unit, frame | meaning |")
        out.append("|---|---|---|---|---|---|")
        for k, f in enumerate(sec.fields):
            off = k if sec.soa else _COLS[f.const]
            out.append(f"| `{f.const}` | {off} | `{f.attr}` | {_shape_text(f.shape)} | {f.unit} | {f.doc} |")
        out.append("")
    return "\n".join(out)


DOC_PATH = Path(__file__).with_name("LAYOUT.md")


def main() -> int:
    """``python -m solver.layout``: regenerate solver/LAYOUT.md from the tables (a developer's
    step after changing them; tests/solver/test_layout.py fails while the file is stale)."""
    DOC_PATH.write_text(markdown(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
