"""Packed-array layout shared by the compiled kernels (:mod:`solver.kernels`, a folder) and the Python
side (:mod:`solver.chains`).

All solver state and parameters live in two flat buffers so that one substep is one compiled
call with three array arguments (``world``, ``F``, ``I``): a numba dispatch costs roughly
0.1-0.2 µs per array argument, which matters when a whole Godette substep is ~1 µs of work.

``I`` (int64) starts with a header of :data:`HDR` entries (counts, section offsets, mode,
counters); ``F`` (float64) holds per-segment, per-collider, per-chain and global sections.
Sections are row-major 2D blocks ``(rows, width)`` addressed by the offsets in the header.
Column names below are offsets inside a row; 3x4 matrices are stored row-major
(r00 r01 r02 t0 r10 r11 r12 t1 r20 r21 r22 t2), column-vector convention (DESIGN §3).
"""

from __future__ import annotations

# ------------------------------------------------------------------ I header
H_S = 0          # segments (simulated joints)
H_C = 1          # colliders
H_K = 2          # chains
H_P = 3          # collider references (pairs) in the CSR list
H_M = 4          # affected nodes (simulated joints and their descendants) for apply()
H_MODE = 5       # MODE_* below
H_MAXIT = 6      # contact projection passes per substep
H_OF_SEG = 7     # F offsets
H_OF_COL = 8
H_OF_CH = 9
H_OF_G = 10
H_OF_POSE = 11
H_OI_SEG = 12    # I offsets
H_OI_COL = 13
H_OI_CH = 14
H_OI_PAIR = 15
H_OI_AFF = 16
H_N_AUTO_RESET = 17   # counter: automatic (teleport) resets
H_N_STEPS = 18        # counter: substeps performed
H_N_CONTACT = 19      # last substep: contact corrections applied
H_N_UNRESOLVED = 20   # last substep: links still overlapping a collider after the passes
H_N_ROOT_INSIDE = 21  # last substep: (link, collider) pairs whose root is inside (tail-only test)
H_N_CONTACT_TOTAL = 22  # counter: contact corrections since construction
H_OF_PAIRF = 23       # F offset of the per-reference contact allowances (P,)
H_OF_CB = 24          # F offset of the compact collider bounds (4 C): centre x, y, z and radius, each (C,)
H_OI_CAND = 25        # I offset of the per-segment candidate scratch (C + 1,)
H_RELAX = 26          # rest-shape: chain relaxation passes after a contact (0: off)
HDR = 32

MODE_REST_SHAPE = 0
MODE_LEGACY = 1
MODE_VRM = 2
MODES = {"rest-shape": MODE_REST_SHAPE, "legacy": MODE_LEGACY, "vrm": MODE_VRM}  # keys: solver.modes.SolverMode

# ------------------------------------------------------------------ per segment, F (SF wide)
S_X = 0        # (3) tail position x, world metres
S_V = 3        # (3) tail velocity v, world m/s
S_XP = 6       # (3) tail at the previous substep (interpolation; Verlet history in "vrm" mode)
S_TLOC = 9     # (3) rest tail offset in the joint's own local frame (file units)
S_B = 12       # (3) rest offset a_i in the anchor's local frame: R_H R_i^0 (s a_i) = M_H @ b
S_GPRE = 15    # (3) gravity preload (rest tangential gravity) in the anchor's local frame
S_G = 18       # (3) gravity g, model m/s² (multiplied by the chain scale s)
S_K = 21       # stiffness k, 1/s²
S_DAMP = 22    # exp(-c h)
S_C = 23       # damping rate c, 1/s
S_HIT = 24     # hit radius, model metres (multiplied by s)
S_VST = 25     # VRM stiffness (unitless, "vrm" mode)
S_VDRAG = 26   # VRM dragForce
S_VEXT = 27    # (3) VRM gravityDir * gravityPower
S_W = 30       # (12) solved world matrix of the joint (3x4) at the last substep (kept
               #      only where SI_NEEDW; the pose kernel recomputes all for drawing)
S_REL = 42     # (12) rest_world[sim parent]^-1 @ rest_world[joint] (3x4)
S_L0 = 54      # rest link length, model metres
S_O = 55       # (3) scratch: the link's root at this substep (links not rooted at a parent tail)
S_LEN = 58     # scratch: the link's length at this substep, metres
S_UNR = 59     # scratch: collider references the link still overlaps (> tolerance) after its contact passes
S_NCONV = 60   # scratch: 1 when the link's last contact passes did not converge
SF = 61

# ------------------------------------------------------------------ per segment, I (SI wide)
SI_NODE = 0    # the joint's node
SI_SPAR = 1    # nearest simulated ancestor segment, -1 when the joint hangs from the body
SI_CHAIN = 2
SI_P0 = 3      # collider references pairs[P0:P1]
SI_P1 = 4
SI_AUTH = 5    # 1: authored (animation drives it; the solver follows, never overrides)
SI_FAST = 6    # 1: rest-shape joint sitting at its simulated parent's tail: its root is that
               #    tail, no frame needs to be composed (the fast path)
SI_NEEDW = 7   # 1: its solved frame S_W is needed in the substep (a child reads it)
SI_REFMASK = 8  # bit c set: collider c is referenced (0 when there are more than 63 colliders
               #    or a collider is referenced twice: the broad phase then walks the references)
SI = 9

# ------------------------------------------------------------------ per segment, pose scratch F (PF wide)
P_W = 0        # (12) posed world matrix (interpolated tails)
P_D = 12       # (12) world correction W_posed @ inverse(W_input)
P_Q = 24       # (4) local rotation xyzw for skinning
P_RQ = 28      # (4) rest local rotation xyzw
PF = 32

# ------------------------------------------------------------------ per collider
C_OFF = 0      # (3) head / centre / plane point, collider-node space
C_TAIL = 3     # (3) capsule tail, collider-node space
C_RAD = 6      # radius, node units
C_NRM = 7      # (3) plane normal, node space
C_WA = 10      # (3) world head
C_WB = 13      # (3) world tail
C_WR = 16      # world radius
C_WN = 19      # (3) world plane normal
C_BC = 22      # (3) bounding-sphere centre
C_BR = 25      # bounding-sphere radius (-1: unbounded, planes)
CF = 26

CI_NODE = 0    # collider node (-1: world)
CI_SHAPE = 1   # SHAPE_* below
CI = 2

SHAPE_SPHERE = 0
SHAPE_CAPSULE = 1
SHAPE_INSIDE_SPHERE = 2
SHAPE_INSIDE_CAPSULE = 3
SHAPE_PLANE = 4
SHAPES = {"sphere": SHAPE_SPHERE, "capsule": SHAPE_CAPSULE, "inside_sphere": SHAPE_INSIDE_SPHERE,
          "inside_capsule": SHAPE_INSIDE_CAPSULE, "plane": SHAPE_PLANE}

# ------------------------------------------------------------------ per chain
K_APREV = 0    # (3) anchor position at the previous substep (teleport detection)
K_CPREV = 3    # (12) centre-node world matrix at the previous substep
K_DET0 = 15    # |det| of the anchor's rest world 3x3
K_S = 16       # current scale s (cube root of the determinant ratio)
K_REACH = 17   # rest length of the chain + largest hit radius (broad phase), model metres
KF = 18

KI_ANCHOR = 0  # anchor node: nearest non-simulated ancestor of the first joint (-1: world)
KI_CENTER = 1  # VRM centre node (-1: world)
KI_SEG0 = 2    # segments [SEG0, SEG1) in processing order
KI_SEG1 = 3
KI = 4

# ------------------------------------------------------------------ globals, F
G_H = 0          # substep seconds (1/120 for the runtime)
G_TELEPORT = 1   # automatic reset distance, model metres per substep
G_CONTACT_TOL = 2  # overlap below this (metres) counts as resolved
G_U_MIN = 3      # smallest contact parameter u used to lever a segment push to its tail
G_BEND_MAX = 4   # relaxation: largest bend of a link off its parent's rest continuation, radians
G_BEND_COS = 5   # cos(G_BEND_MAX)
G_BEND_WP = 6    # relaxation: share of an excess bend taken by the parent link (the child takes the rest)
GF = 8

# ------------------------------------------------------------------ affected nodes, I
A_NODE = 0
A_SEG = 1
AI = 2
