"""The avatar data model: plain numpy data, no OpenGL, no solver, no camera.

Everything the loaders produce (:func:`avatars.load_avatar`) and the generator writes.
Conventions (docs/design.md §3): metres; glTF right-handed, +Y up; after loading every avatar faces
+Z (VRM 0.x files are converted); quaternions (x, y, z, w); matrices 4x4 for column
vectors. Node indices are glTF node indices of the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

import numpy as np

from .errors import AvatarWarning
from .contact import SkinContact
from .skeleton import Skeleton

AlphaMode = Literal["OPAQUE", "MASK", "BLEND"]
ColliderShape = Literal["sphere", "capsule", "inside_sphere", "inside_capsule", "plane"]
Override = Literal["none", "block", "blend"]
RollAxis = Literal["X", "Y", "Z"]
AimAxis = Literal["PositiveX", "NegativeX", "PositiveY", "NegativeY", "PositiveZ", "NegativeZ"]


# --------------------------------------------------------------------------- meshes


@dataclass(frozen=True, eq=False)
class Primitive:
    """One glTF mesh primitive, de-indexed accessors as numpy arrays.

    Attributes:
        positions: (V, 3) float32, metres, mesh-node space.
        normals: (V, 3) float32 unit vectors, or None.
        uv0: (V, 2) float32 TEXCOORD_0 (glTF convention: v down), or None.
        uv1: (V, 2) float32 TEXCOORD_1, or None.
        colors: (V, 4) float32 COLOR_0 in linear RGBA, or None.
        joints: (V, 4) uint16 JOINTS_0, indices into the skin's joint list, or None.
        weights: (V, 4) float32 WEIGHTS_0 (rows sum to 1), or None.
        indices: (I,) uint32 triangle list (generated 0..V-1 when the file has none).
        mode: glTF primitive mode (4 = TRIANGLES; other modes are kept but not drawn).
        material: index into ``Avatar.materials``, or -1 for the default material.
        morph_positions: (T, V, 3) float32 position deltas (T = 0 when there are none).
        morph_normals: (T, V, 3) float32 normal deltas, or None.
    """

    positions: np.ndarray
    indices: np.ndarray
    normals: np.ndarray | None = None
    uv0: np.ndarray | None = None
    uv1: np.ndarray | None = None
    colors: np.ndarray | None = None
    joints: np.ndarray | None = None
    weights: np.ndarray | None = None
    mode: int = 4
    material: int = -1
    morph_positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 3), np.float32))
    morph_normals: np.ndarray | None = None

    @property
    def vertex_count(self) -> int:
        return int(self.positions.shape[0])


@dataclass(frozen=True, eq=False)
class Mesh:
    """A glTF mesh: primitives sharing morph target names and default weights (T,)."""

    name: str
    primitives: tuple[Primitive, ...]
    target_names: tuple[str, ...] = ()
    default_weights: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def vertex_count(self) -> int:
        return sum(p.vertex_count for p in self.primitives)


@dataclass(frozen=True, eq=False)
class Skin:
    """A glTF skin: ``joints`` (J,) node indices and ``inverse_bind`` (J, 4, 4) float64."""

    name: str
    joints: np.ndarray
    inverse_bind: np.ndarray
    skeleton: int = -1


@dataclass(frozen=True)
class MeshInstance:
    """A node that draws a mesh, with its skin (-1 when rigid: drawn with the node's world matrix).

    ``contact``: per-vertex contact after skinning (:mod:`avatars.contact`; the try-on hair),
    None for every loaded mesh."""

    node: int
    mesh: int
    skin: int = -1
    contact: SkinContact | None = None


# --------------------------------------------------------------------------- materials


@dataclass(frozen=True)
class Sampler:
    """glTF sampler as GL enums (defaults: linear / linear-mipmap-linear / repeat)."""

    mag_filter: int = 9729
    min_filter: int = 9987
    wrap_s: int = 10497
    wrap_t: int = 10497


@dataclass(frozen=True, eq=False)
class Image:
    """A decoded image: ``rgba`` (H, W, 4) uint8, sRGB-encoded as stored."""

    name: str
    rgba: np.ndarray
    mime_type: str = ""


@dataclass(frozen=True)
class Texture:
    """A glTF texture: an image index and its sampler."""

    image: int
    sampler: Sampler = Sampler()


@dataclass(frozen=True, eq=False)
class TextureTransform:
    """KHR_texture_transform: uv' = T(offset) * R(rotation, radians) * S(scale) * uv."""

    offset: np.ndarray = field(default_factory=lambda: np.zeros(2))
    rotation: float = 0.0
    scale: np.ndarray = field(default_factory=lambda: np.ones(2))
    texcoord: int | None = None

    def matrix(self) -> np.ndarray:
        """The (3, 3) uv transform matrix of the KHR_texture_transform spec."""
        c, s = np.cos(self.rotation), np.sin(self.rotation)
        t = np.array([[1, 0, self.offset[0]], [0, 1, self.offset[1]], [0, 0, 1]], float)
        r = np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]], float)
        sc = np.diag([self.scale[0], self.scale[1], 1.0])
        return t @ r @ sc


@dataclass(frozen=True)
class TextureRef:
    """A material's use of a texture: index into ``Avatar.textures``, uv set, optional transform."""

    texture: int
    texcoord: int = 0
    transform: TextureTransform | None = None


@dataclass(frozen=True, eq=False)
class MToon:
    """MToon parameters in VRMC_materials_mtoon 1.0 terms (VRM 0.x values are migrated as
    three-vrm's ``VRMMaterialsV0CompatPlugin`` does, see :mod:`avatars.materials`).

    Colours are linear RGB (3,). ``outline_width`` is metres for ``worldCoordinates`` and a
    fraction of the screen height for ``screenCoordinates``. Textures: ``shade_texture``
    (sRGB, multiplies ``shade_color``), ``shading_shift_texture`` (linear, R channel times
    ``shading_shift_texture_scale`` added to the shading shift), ``matcap_texture`` (sRGB,
    sampled with the view-space normal, times ``matcap_color``, added to the rim),
    ``rim_multiply_texture`` (sRGB, multiplies the rim), ``outline_width_multiply_texture``
    (linear, G channel multiplies the outline width), ``uv_animation_mask_texture`` (linear,
    B channel multiplies the UV animation). UV animation speeds: scroll in uv units per
    second, rotation in radians per second (around uv (0.5, 0.5)).
    """

    shade_color: np.ndarray = field(default_factory=lambda: np.zeros(3))
    shade_texture: TextureRef | None = None
    shading_shift: float = 0.0
    shading_shift_texture: TextureRef | None = None
    shading_shift_texture_scale: float = 1.0
    shading_toony: float = 0.9
    gi_equalization: float = 0.9
    matcap_color: np.ndarray = field(default_factory=lambda: np.ones(3))
    matcap_texture: TextureRef | None = None
    rim_color: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rim_multiply_texture: TextureRef | None = None
    rim_fresnel_power: float = 5.0
    rim_lift: float = 0.0
    rim_lighting_mix: float = 1.0
    outline_width_mode: Literal["none", "worldCoordinates", "screenCoordinates"] = "none"
    outline_width: float = 0.0
    outline_width_multiply_texture: TextureRef | None = None
    outline_color: np.ndarray = field(default_factory=lambda: np.zeros(3))
    outline_lighting_mix: float = 1.0
    uv_animation_mask_texture: TextureRef | None = None
    uv_animation_scroll_x_speed: float = 0.0
    uv_animation_scroll_y_speed: float = 0.0
    uv_animation_rotation_speed: float = 0.0
    render_queue_offset: int = 0
    transparent_with_z_write: bool = False

    def textures(self) -> dict[str, TextureRef]:
        """The MToon textures present, by field name."""
        names = ("shade_texture", "shading_shift_texture", "matcap_texture", "rim_multiply_texture",
                 "outline_width_multiply_texture", "uv_animation_mask_texture")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}

    @property
    def uv_animated(self) -> bool:
        """True when any UV animation speed is non-zero."""
        return bool(self.uv_animation_scroll_x_speed or self.uv_animation_scroll_y_speed
                    or self.uv_animation_rotation_speed)


@dataclass(frozen=True, eq=False)
class Material:
    """A glTF material with the extensions swaycam draws.

    ``base_color_factor`` (4,) is linear RGBA; ``emissive_factor`` (3,) linear RGB.
    ``normal_scale`` scales the normal texture's x and y; ``metallic_roughness_texture``
    (linear: roughness in G, metallic in B) and ``occlusion_texture`` (linear, R, mixed in by
    ``occlusion_strength``) are glTF's metallic-roughness PBR inputs.
    """

    name: str = ""
    base_color_factor: np.ndarray = field(default_factory=lambda: np.ones(4))
    base_color_texture: TextureRef | None = None
    emissive_factor: np.ndarray = field(default_factory=lambda: np.zeros(3))
    emissive_texture: TextureRef | None = None
    normal_texture: TextureRef | None = None
    normal_scale: float = 1.0
    metallic_factor: float = 1.0
    roughness_factor: float = 1.0
    metallic_roughness_texture: TextureRef | None = None
    occlusion_texture: TextureRef | None = None
    occlusion_strength: float = 1.0
    alpha_mode: AlphaMode = "OPAQUE"
    alpha_cutoff: float = 0.5
    double_sided: bool = False
    unlit: bool = False
    mtoon: MToon | None = None


# --------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class MorphTargetBind:
    """Drive morph target ``index`` of the mesh drawn by ``node`` with ``weight`` (0..1)."""

    node: int
    index: int
    weight: float


@dataclass(frozen=True, eq=False)
class MaterialColorBind:
    """Blend a material colour toward ``target`` (4,) linear RGBA. ``type`` is a VRM 1.0 name:
    color, emissionColor, shadeColor, matcapColor, rimColor, outlineColor."""

    material: int
    type: str
    target: np.ndarray


@dataclass(frozen=True, eq=False)
class TextureTransformBind:
    """Blend a material's base texture transform toward ``scale`` (2,) and ``offset`` (2,)."""

    material: int
    scale: np.ndarray
    offset: np.ndarray


@dataclass(frozen=True)
class Expression:
    """A VRM expression under its VRM 1.0 name (VRM 0.x presets are renamed on import)."""

    name: str
    preset: bool
    morph_target_binds: tuple[MorphTargetBind, ...] = ()
    material_color_binds: tuple[MaterialColorBind, ...] = ()
    texture_transform_binds: tuple[TextureTransformBind, ...] = ()
    is_binary: bool = False
    override_blink: Override = "none"
    override_look_at: Override = "none"
    override_mouth: Override = "none"


# --------------------------------------------------------------------------- springs


#: The angle-limit kinds of the VRMC_springBone_limit-1.0 draft (vrm-specification commit 75fbd48).
LIMIT_KINDS = ("cone", "hinge", "spherical")


@dataclass(frozen=True, eq=False)
class JointLimit:
    """An angle limit of a spring joint's segment (VRMC_springBone_limit-1.0 draft, vrm-c/
    vrm-specification commit 75fbd48: cone, hinge or spherical; :mod:`solver.kernels.limits`).

    Attributes:
        kind: "cone", "hinge" or "spherical".
        angle: radians: the cone's or hinge's angle, the spherical limit's pitch (≥ 0; π and
            above act as π).
        yaw: radians, the spherical limit's yaw (≥ 0; π/2 and above act as π/2); 0 otherwise.
        rotation: (4,) xyzw unit quaternion, the limit's turn off its default orientation (the
            rest tail direction as its +Y) in the joint's rest local frame.
        source: where it came from: "file" (the draft's extension), "file:angleLimit" (an
            ``angleLimit`` in the joint's VRMC_springBone_extended_collider extension), "fit"
            (the try-on auto-rig's ``max_bend``), "config".
    """

    kind: str
    angle: float
    yaw: float = 0.0
    rotation: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 0.0, 1.0]))
    source: str = "file"

    def as_dict(self) -> dict:
        """JSON-ready: {"kind", "angle_deg", "yaw_deg", "rotation", "source"}."""
        return {"kind": self.kind, "angle_deg": float(np.degrees(self.angle)), "yaw_deg": float(np.degrees(self.yaw)),
                "rotation": [float(x) for x in self.rotation], "source": self.source}


@dataclass(frozen=True, eq=False)
class SpringJoint:
    """One spring joint (VRMC_springBone joint terms).

    ``gravity_dir`` (3,) is a unit vector in world space (+Y up, avatar facing +Z);
    ``hit_radius`` is metres in the joint node's scale; ``stiffness``, ``drag_force`` and
    ``gravity_power`` are the file's unitless VRM values. ``max_bend`` (radians, or None) is
    a cone limit proposed for the joint's segment: the largest angle between it and its rest
    direction in its parent's frame (swaycam's extension, written by the try-on auto-rig —
    a stiffer root —, carried in the joint's ``extras`` as ``swaycamMaxBend``; the solver
    enforces it as a cone when no other limit applies, :mod:`solver.limits`). ``limit`` is the
    angle limit the file gives the joint (:class:`JointLimit`), or None.
    """

    node: int
    hit_radius: float = 0.0
    stiffness: float = 1.0
    drag_force: float = 0.5
    gravity_power: float = 0.0
    gravity_dir: np.ndarray = field(default_factory=lambda: np.array([0.0, -1.0, 0.0]))
    max_bend: float | None = None
    limit: JointLimit | None = None


@dataclass(frozen=True, eq=False)
class Spring:
    """A chain of joints, each a descendant of the one before it.

    Segments: joint i -> joint i+1 (with joint i's parameters and hitRadius); when
    ``tail_offset`` is set (VRM 0.x leaves), the last joint also has a segment to a virtual
    tail at ``tail_offset`` (3,) metres in the last joint's local frame (7 cm along the bone,
    as UniVRM 0.x does). ``center`` is the node whose space the simulation runs in (-1: world).
    ``sheet`` (≥ 0) names the connected hair sheet the spring carries together with others
    (-1: none; :class:`SpringLink`, swaycam's extension in the spring's ``extras``).
    """

    name: str
    joints: tuple[SpringJoint, ...]
    collider_groups: tuple[int, ...] = ()
    center: int = -1
    tail_offset: np.ndarray | None = None
    sheet: int = -1

    @property
    def segment_count(self) -> int:
        return len(self.joints) - 1 + (self.tail_offset is not None)


@dataclass(frozen=True, eq=False)
class SpringLink:
    """A sideways link between two springs that carry one connected hair sheet (swaycam's
    extension of VRMC_springBone, in its ``extras`` as ``swaycamSpringLinks``; written by the
    try-on auto-rig for the solver's linked sheets — nothing enforces it yet).

    Attributes:
        springs: (a, b) indices into ``Avatar.springs``.
        joints: ((i, j), ...) joint pairs: joint i of spring a with joint j of spring b.
        rest: (K,) rest distance of each pair, metres (the rest pose's world positions).
        sheet: the sheet both springs carry (``Spring.sheet``).
        shared: mesh edges between the hair the two springs carry most (how much of a seam
            they share; a link's strength can follow it).
    """

    springs: tuple[int, int]
    joints: tuple[tuple[int, int], ...]
    rest: tuple[float, ...]
    sheet: int
    shared: int = 0


@dataclass(frozen=True, eq=False)
class Collider:
    """A spring collider in its node's local frame (metres).

    ``offset`` (3,) is the sphere centre / capsule head / plane point; ``tail`` (3,) the
    capsule tail (equal to ``offset`` for spheres); ``normal`` (3,) the plane normal;
    ``inside_*`` shapes keep joints inside instead of outside.
    """

    node: int
    shape: ColliderShape
    offset: np.ndarray
    radius: float = 0.0
    tail: np.ndarray | None = None
    normal: np.ndarray | None = None


@dataclass(frozen=True)
class ColliderGroup:
    """A named set of collider indices (into ``Avatar.colliders``)."""

    name: str
    colliders: tuple[int, ...]


# --------------------------------------------------------------------------- node constraints
#
# VRMC_node_constraint 1.0 (vrm-c/vrm-specification, specification/VRMC_node_constraint-1.0):
# a node (the destination) takes its local rotation from another node (the source). The
# destination's rotation is slerp(rest, target, weight) from its rest rotation (the file's) to
# the rotation the constraint determines; its translation and scale are left alone.
# Evaluation lives in the runtime (runtime/rig/constraints.py); this is the file's data.


@dataclass(frozen=True)
class RollConstraint:
    """Roll constraint: the destination turns about its rest ``roll_axis`` (its local X, Y or Z)
    by the source's rotation about that axis (swing removed, "twist" kept), both in local
    space; for twist bones of arms and legs.

    Attributes:
        node: the destination node.
        source: the source node (never ``node``).
        roll_axis: "X", "Y" or "Z".
        weight: in [0, 1]; 0 keeps the rest rotation, 1 applies the whole roll.
    """

    node: int
    source: int
    roll_axis: RollAxis
    weight: float = 1.0
    kind: ClassVar[str] = "roll"

    @property
    def axis(self) -> np.ndarray:
        """(3,) the roll axis as a unit vector in the destination's rest frame."""
        return np.array([self.roll_axis == "X", self.roll_axis == "Y", self.roll_axis == "Z"], np.float64)


@dataclass(frozen=True)
class AimConstraint:
    """Aim constraint: the smallest rotation from the destination's rest pose that points its
    ``aim_axis`` at the source's world position (world space); for sleeves.

    Attributes:
        node: the destination node.
        source: the source node (never ``node``, never below ``node``).
        aim_axis: "PositiveX", "NegativeX", "PositiveY", "NegativeY", "PositiveZ" or "NegativeZ".
        weight: in [0, 1].
    """

    node: int
    source: int
    aim_axis: AimAxis
    weight: float = 1.0
    kind: ClassVar[str] = "aim"

    @property
    def axis(self) -> np.ndarray:
        """(3,) the aim axis as a unit vector in the destination's local frame."""
        sign = -1.0 if self.aim_axis.startswith("Negative") else 1.0
        return sign * np.array([self.aim_axis.endswith(c) for c in "XYZ"], np.float64)


@dataclass(frozen=True)
class RotationConstraint:
    """Rotation constraint (local-local, Blender's Copy Rotation): the destination turns from
    its rest rotation by the source's local rotation change from the source's rest rotation.

    Attributes:
        node: the destination node.
        source: the source node (never ``node``).
        weight: in [0, 1].
    """

    node: int
    source: int
    weight: float = 1.0
    kind: ClassVar[str] = "rotation"


#: One node's constraint (``Avatar.constraints`` holds them in evaluation order).
NodeConstraint = RollConstraint | AimConstraint | RotationConstraint


# --------------------------------------------------------------------------- avatar


@dataclass(frozen=True)
class Meta:
    """Avatar metadata in VRM 1.0 terms (VRM 0.x fields are mapped)."""

    name: str = ""
    version: str = ""
    authors: tuple[str, ...] = ()
    copyright: str = ""
    contact: str = ""
    references: tuple[str, ...] = ()
    license_url: str = ""
    license_name: str = ""
    avatar_permission: str = ""
    commercial_usage: str = ""
    allow_redistribution: bool | None = None
    modification: str = ""
    other_license_url: str = ""
    extra: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, eq=False)
class Avatar:
    """A loaded avatar.

    Attributes:
        path: the file it was loaded from.
        vrm_version: "1.0", "0.x", or None for plain glTF.
        skeleton: every node of the file (see :class:`avatars.skeleton.Skeleton`).
        humanoid: VRM 1.0 humanoid bone name -> node index.
        expressions: VRM 1.0 expression name -> Expression.
        look_at: the eye gaze data (:class:`avatars.lookat.LookAt`: VRMC_vrm lookAt or VRM 0.x
            firstPerson lookAt), or None.
        spring_links: sideways links between springs of one hair sheet (:class:`SpringLink`).
        constraints: VRMC_node_constraint constraints, at most one per destination node, in
            evaluation order (a constraint comes after those whose results it reads; see
            :func:`avatars.constraints.evaluation_order`). VRM 0.x avatars have none.
        warnings: optional parts that were skipped, with their JSON paths.
    """

    path: str
    vrm_version: str | None
    meta: Meta
    skeleton: Skeleton
    meshes: tuple[Mesh, ...] = ()
    mesh_instances: tuple[MeshInstance, ...] = ()
    skins: tuple[Skin, ...] = ()
    materials: tuple[Material, ...] = ()
    textures: tuple[Texture, ...] = ()
    images: tuple[Image, ...] = ()
    humanoid: dict[str, int] = field(default_factory=dict)
    expressions: dict[str, Expression] = field(default_factory=dict)
    springs: tuple[Spring, ...] = ()
    colliders: tuple[Collider, ...] = ()
    collider_groups: tuple[ColliderGroup, ...] = ()
    spring_links: tuple[SpringLink, ...] = ()
    constraints: tuple[NodeConstraint, ...] = ()
    warnings: tuple[AvatarWarning, ...] = ()
    look_at: object | None = None   # avatars.lookat.LookAt (typed loosely: lookat imports gltf_io)

    @property
    def format_name(self) -> str:
        return {"1.0": "VRM 1.0", "0.x": "VRM 0.x"}.get(self.vrm_version or "", "glTF")

    def spring_joint_count(self) -> int:
        """Number of spring joints over all springs."""
        return sum(len(s.joints) for s in self.springs)

    def vertex_count(self) -> int:
        """Vertices of every drawn mesh instance."""
        return sum(self.meshes[m.mesh].vertex_count for m in self.mesh_instances)

    def head_node(self) -> int:
        """The humanoid head node, or -1."""
        return self.humanoid.get("head", -1)
