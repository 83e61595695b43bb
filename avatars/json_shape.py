"""The one typed reading layer for JSON inputs: a shape check run once after parsing.

Every JSON-based input (glTF/GLB, VRM 0.x ``VRM``, VRM 1.0 ``VRMC_*``, ``.vrma``) is
checked against a *shape* — the types the builders read, part by part — before any builder
sees it. After :func:`check_document` every key a builder reads either is absent or has its
declared type (an object is a dict, an index is a non-negative int, a vector has its length
of finite numbers...), so the builders only check meaning (ranges, references, cycles).

What happens to a value of the wrong type is decided by the nearest part that may be left
out:

- a field declared ``req`` (required) or ``fatal`` makes its container wrong too; the
  failure climbs to the nearest optional part (an optional field, an entry of a ``skip``
  array or map) which is *dropped with a warning* naming the JSON path, e.g.
  ``extensions.VRMC_springBone.colliders[0]: expected an object, got 3.0; entry ignored``;
- when nothing optional is above it, loading fails with :class:`AvatarError` naming the
  file and the JSON path: ``nodes[4].translation: expected 3 finite numbers, got ""``.

Why a typed shape of our own rather than the official JSON schemas with a validator: the
schemas (glTF 2.0, VRM 0.0, VRMC_*) validate a whole document (one error refuses the file),
while optional parts must be skipped with a warning; VRM 0.x files in the wild break the
0.0 schema in harmless places (UniVRM writes extra keys, strings for numbers in meta); and
the builders read a small subset of the schemas (this file is the list of what they read).
Dropping a bad value keeps the builders' defaults, which is what the schemas' defaults say.

Shapes: :class:`Num`, :class:`Int`, :class:`Str`, :class:`Bool`, :class:`Arr`, :class:`Obj`
(fields by name; ``values=`` for maps), :class:`Any`. Entries of ``skip`` arrays keep their
index (a bad entry becomes ``{}`` for objects, so indices referring to them stay valid, and
the builder skips the empty part with its own warning); other bad entries are removed.
"""

from __future__ import annotations

import math

from .errors import Issues

#: The largest index or count a file may use (glTF indices are uint32; accessors count < 2^32).
MAX_INDEX = 2 ** 32 - 1
#: The largest byte offset or length (a file larger than this cannot be read anyway).
MAX_BYTES = 2 ** 48


class _Bad(Exception):
    def __init__(self, path: str, reason: str):
        self.path, self.reason = path, reason


def _short(v) -> str:
    try:
        t = repr(v) if isinstance(v, float) else __import__("json").dumps(v)
    except (TypeError, ValueError):
        t = repr(v)
    return t if len(t) <= 40 else t[:37] + "..."


def _join(path: str, key) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


class Shape:
    what = "a value"

    def check(self, v, path: str, issues: Issues):
        """The value (perhaps converted or cleaned); raises _Bad when it does not fit."""
        raise NotImplementedError

    def _bad(self, v, path):
        return _Bad(path, f"expected {self.what}, got {_short(v)}")


class Any(Shape):
    def check(self, v, path, issues):
        return v


class Num(Shape):
    """A number (not a boolean); finite unless ``finite=False``; within [lo, hi] when given."""

    def __init__(self, *, finite: bool = True, lo: float | None = None, hi: float | None = None):
        self.finite, self.lo, self.hi = finite, lo, hi
        self.what = "a finite number" if finite else "a number"

    def check(self, v, path, issues):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self._bad(v, path)
        if isinstance(v, int) and abs(v) > 2 ** 53:
            raise _Bad(path, f"{v} is too large for a number")
        if self.finite and not math.isfinite(v):
            raise self._bad(v, path)
        if (self.lo is not None and v < self.lo) or (self.hi is not None and v > self.hi):
            raise _Bad(path, f"{v!r} is outside [{self.lo}, {self.hi}]")
        return v


class Int(Shape):
    """An integer in [lo, hi] (a float with an integral value is accepted as the integer)."""

    def __init__(self, lo: int = 0, hi: int = MAX_INDEX):
        self.lo, self.hi = lo, hi
        self.what = f"an integer in [{lo}, {hi}]"

    def check(self, v, path, issues):
        if isinstance(v, float) and math.isfinite(v) and v.is_integer() and abs(v) <= 2 ** 53:
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or not self.lo <= v <= self.hi:
            raise self._bad(v, path)
        return v


class Str(Shape):
    what = "a string"

    def check(self, v, path, issues):
        if not isinstance(v, str):
            raise self._bad(v, path)
        return v


class Bool(Shape):
    what = "true or false"

    def check(self, v, path, issues):
        if not isinstance(v, bool):
            raise self._bad(v, path)
        return v


class Arr(Shape):
    """An array of ``item``; ``n`` exact length, ``lo``/``hi`` length bounds; ``skip``: a bad
    entry is dropped with a warning (``{}`` in its place when ``item`` is an object, so
    indices stay) instead of failing the array."""

    def __init__(self, item: Shape, *, n: int | None = None, lo: int = 0, hi: int | None = None,
                 skip: bool = False, what: str | None = None):
        self.item, self.n, self.lo, self.hi, self.skip = item, n, lo, hi, skip
        if what:
            self.what = what
        elif n is not None:
            self.what = f"{n} {'finite numbers' if isinstance(item, Num) else 'values'}"
        else:
            self.what = "an array" + (f" of at least {lo}" if lo else "")

    def check(self, v, path, issues):
        if not isinstance(v, list) or (self.n is not None and len(v) != self.n) or len(v) < self.lo \
                or (self.hi is not None and len(v) > self.hi):
            raise self._bad(v, path)
        out = []
        for i, x in enumerate(v):
            p = f"{path}[{i}]"
            try:
                out.append(self.item.check(x, p, issues))
            except _Bad as bad:
                if isinstance(self.item, Num) and not self.skip:   # a vector: name the whole of it
                    nonfinite = isinstance(x, float) and not math.isfinite(x)
                    raise _Bad(path, f"contains NaN or inf: {_short(v)}" if nonfinite else
                               f"expected {self.what}, got {_short(v)}") from None
                if not self.skip:
                    raise
                issues.warn(bad.path, f"{bad.reason}; entry ignored" if bad.path == p else
                            f"{bad.reason}; {p} ignored")
                if isinstance(self.item, Obj):
                    out.append({})
        return out


class Obj(Shape):
    """An object. ``fields``: name -> shape, or (shape, "req") for a required field, or
    (shape, "fatal") for one that may be absent but fails its object when wrong. Other
    fields are optional: a wrong one is dropped with a warning. ``values``: the shape of
    every value of a map (``skip_values``: a bad value is dropped with a warning). Keys
    not named are kept as they are."""

    what = "an object"

    def __init__(self, fields: dict | None = None, *, values: Shape | None = None, skip_values: bool = True):
        self.fields = {}
        for k, f in (fields or {}).items():
            shape, mode = f if isinstance(f, tuple) else (f, "opt")
            self.fields[k] = (shape, mode)
        self.values, self.skip_values = values, skip_values

    def check(self, v, path, issues):
        if not isinstance(v, dict):
            raise self._bad(v, path)
        out = dict(v)
        for k, (shape, mode) in self.fields.items():
            p = _join(path, k)
            if k not in v:
                if mode == "req":
                    raise _Bad(p, "is required but missing")
                continue
            try:
                out[k] = shape.check(v[k], p, issues)
            except _Bad as bad:
                if mode != "opt":
                    raise
                issues.warn(bad.path, f"{bad.reason}; ignored" if bad.path == p else f"{bad.reason}; {p} ignored")
                del out[k]
        if self.values is not None:
            for k in list(out):
                if k in self.fields:
                    continue
                p = _join(path, k)
                try:
                    out[k] = self.values.check(out[k], p, issues)
                except _Bad as bad:
                    if not self.skip_values:
                        raise
                    issues.warn(bad.path, f"{bad.reason}; {p} ignored")
                    del out[k]
        return out


def check(shape: Shape, value, path: str, issues: Issues):
    """``value`` checked against ``shape`` (module doc).

    Raises:
        AvatarError: a wrong value no optional part above it can absorb; names the file
            (``issues.path``) and the JSON path.
    """
    try:
        return shape.check(value, path, issues)
    except _Bad as bad:
        raise issues.error(bad.path, bad.reason) from None


# --------------------------------------------------------------------------- the shapes

IDX = Int()
ANY_INT = Int(-(2 ** 31), 2 ** 31 - 1)
NUM = Num()
REQ = "req"
FATAL = "fatal"


def vec(n: int) -> Arr:
    return Arr(NUM, n=n)


def nums(lo: int = 0) -> Arr:
    return Arr(NUM, lo=lo, what=f"an array of at least {lo} finite numbers" if lo else "an array of finite numbers")


XYZ = Obj({"x": NUM, "y": NUM, "z": NUM})

TEXTURE_TRANSFORM = Obj({"offset": vec(2), "rotation": NUM, "scale": vec(2), "texCoord": Int(0, 7)})
TEXINFO = Obj({"index": (IDX, REQ), "texCoord": Int(0, 7), "scale": NUM, "strength": NUM,
               "extensions": Obj({"KHR_texture_transform": TEXTURE_TRANSFORM})})

MTOON1 = Obj({
    **{k: NUM for k in ("shadingShiftFactor", "shadingToonyFactor", "giEqualizationFactor",
                        "parametricRimFresnelPowerFactor", "parametricRimLiftFactor", "rimLightingMixFactor",
                        "outlineWidthFactor", "outlineLightingMixFactor", "uvAnimationScrollXSpeedFactor",
                        "uvAnimationScrollYSpeedFactor", "uvAnimationRotationSpeedFactor")},
    **{k: nums(3) for k in ("shadeColorFactor", "matcapFactor", "parametricRimColorFactor", "outlineColorFactor")},
    **{k: TEXINFO for k in ("shadeMultiplyTexture", "shadingShiftTexture", "matcapTexture", "rimMultiplyTexture",
                            "outlineWidthMultiplyTexture", "uvAnimationMaskTexture")},
    "outlineWidthMode": Str(), "renderQueueOffsetNumber": Int(-100, 100), "transparentWithZWrite": Bool(),
})

MATERIAL = Obj({
    "name": Str(),
    "pbrMetallicRoughness": Obj({"baseColorFactor": vec(4), "baseColorTexture": TEXINFO, "metallicFactor": NUM,
                                 "roughnessFactor": NUM, "metallicRoughnessTexture": TEXINFO}),
    "emissiveFactor": vec(3), "emissiveTexture": TEXINFO, "normalTexture": TEXINFO, "occlusionTexture": TEXINFO,
    "alphaMode": Str(), "alphaCutoff": NUM, "doubleSided": Bool(),
    "extensions": Obj({"VRMC_materials_mtoon": MTOON1, "KHR_materials_unlit": Obj(),
                       "KHR_materials_emissive_strength": Obj({"emissiveStrength": NUM})}),
})

PRIMITIVE = Obj({
    "attributes": (Obj(values=IDX, skip_values=False), REQ), "indices": (IDX, FATAL), "material": IDX,
    "mode": Int(0, 6), "targets": (Arr(Obj(values=IDX, skip_values=False)), FATAL),
    "extras": Obj({"targetNames": Arr(Str())}),
})

NODE = Obj({
    "name": Str(), "children": (Arr(IDX), FATAL), "mesh": (IDX, FATAL), "skin": (IDX, FATAL), "camera": IDX,
    "translation": (vec(3), FATAL), "rotation": (vec(4), FATAL), "scale": (vec(3), FATAL),
    "matrix": (vec(16), FATAL), "weights": Arr(NUM),
    # extensions.VRMC_node_constraint: avatars/constraints.py checks every type itself
})

ACCESSOR = Obj({
    "bufferView": (IDX, FATAL), "byteOffset": (Int(0, MAX_BYTES), FATAL), "componentType": (Int(0, 2 ** 16), REQ),
    "normalized": Bool(), "count": (Int(0, MAX_INDEX), REQ), "type": (Str(), REQ), "name": Str(),
    "max": Arr(Num(finite=False)), "min": Arr(Num(finite=False)),
    "sparse": (Obj({
        "count": (Int(1, MAX_INDEX), REQ),
        "indices": (Obj({"bufferView": (IDX, REQ), "byteOffset": (Int(0, MAX_BYTES), FATAL),
                         "componentType": (Int(0, 2 ** 16), REQ)}), REQ),
        "values": (Obj({"bufferView": (IDX, REQ), "byteOffset": (Int(0, MAX_BYTES), FATAL)}), REQ)}), FATAL),
})

BUFFER_VIEW = Obj({"buffer": (IDX, REQ), "byteOffset": (Int(0, MAX_BYTES), FATAL),
                   "byteLength": (Int(1, MAX_BYTES), REQ), "byteStride": (Int(4, 252), FATAL), "target": Int(0, 2 ** 16),
                   "name": Str()})

ANIMATION = Obj({
    "name": Str(),
    "channels": (Arr(Obj({"sampler": (IDX, REQ), "target": (Obj({"node": (IDX, FATAL), "path": (Str(), REQ)}), REQ)})),
                 REQ),
    "samplers": (Arr(Obj({"input": (IDX, REQ), "output": (IDX, REQ), "interpolation": (Str(), FATAL)})), REQ),
})

# VRM 0.x (VRM extension, schema vrm.*.schema.json of VRM 0.0)
VRM0 = Obj({
    "meta": Obj(), "exporterVersion": Str(), "specVersion": Str(),
    "humanoid": Obj({"humanBones": Arr(Obj({"bone": (Str(), REQ), "node": (IDX, REQ)}), skip=True)}),
    "blendShapeMaster": Obj({"blendShapeGroups": Arr(Obj({
        "name": Str(), "presetName": Str(), "isBinary": Bool(),
        "binds": Arr(Obj({"mesh": (IDX, REQ), "index": (IDX, REQ), "weight": NUM}), skip=True),
        "materialValues": Arr(Obj({"materialName": (Str(), REQ), "propertyName": (Str(), REQ),
                                   "targetValue": (nums(), REQ)}), skip=True)}), skip=True)}),
    "secondaryAnimation": Obj({
        "boneGroups": Arr(Obj({"comment": Str(), "stiffiness": NUM, "stiffness": NUM, "gravityPower": NUM,
                               "gravityDir": XYZ, "dragForce": NUM, "center": ANY_INT, "hitRadius": NUM,
                               "bones": Arr(ANY_INT, skip=True), "colliderGroups": Arr(ANY_INT, skip=True)}),
                          skip=True),
        "colliderGroups": Arr(Obj({"node": (ANY_INT, REQ), "colliders": Arr(
            Obj({"offset": XYZ, "radius": NUM}), skip=True)}), skip=True)}),
    "materialProperties": Arr(Obj({
        "name": Str(), "shader": Str(), "renderQueue": Int(-10000, 10000),
        "floatProperties": Obj(values=NUM), "vectorProperties": Obj(values=nums(4)),
        "textureProperties": Obj(values=IDX), "keywordMap": Obj(), "tagMap": Obj()}), skip=True),
})

EXPRESSION1 = Obj({
    "morphTargetBinds": Arr(Obj({"node": (IDX, REQ), "index": (IDX, REQ), "weight": NUM}), skip=True),
    "materialColorBinds": Arr(Obj({"material": (IDX, REQ), "type": (Str(), REQ), "targetValue": (nums(3), REQ)}),
                              skip=True),
    "textureTransformBinds": Arr(Obj({"material": (IDX, REQ), "scale": vec(2), "offset": vec(2)}), skip=True),
    "isBinary": Bool(), "overrideBlink": Str(), "overrideLookAt": Str(), "overrideMouth": Str(),
})

VRMC_VRM = Obj({
    "specVersion": Str(),
    "meta": Obj({"name": Str(), "version": Str(), "authors": Arr(Str(), skip=True), "references": Arr(Str(), skip=True)}),
    "humanoid": Obj({"humanBones": Obj(values=Obj({"node": (IDX, REQ)}))}),
    "expressions": Obj({"preset": Obj(values=EXPRESSION1), "custom": Obj(values=EXPRESSION1)}),
    "lookAt": Obj(), "firstPerson": Obj(),
})

_SHAPE_SPHERE = Obj({"offset": vec(3), "radius": NUM, "inside": Bool()})
_SHAPE_CAPSULE = Obj({"offset": vec(3), "radius": NUM, "tail": vec(3), "inside": Bool()})
SPRING_BONE = Obj({
    "specVersion": Str(),
    "colliders": Arr(Obj({
        "node": (ANY_INT, REQ), "shape": Obj({"sphere": _SHAPE_SPHERE, "capsule": _SHAPE_CAPSULE}),
        "extensions": Obj({"VRMC_springBone_extended_collider": Obj({"shape": Obj({
            "sphere": _SHAPE_SPHERE, "capsule": _SHAPE_CAPSULE,
            "plane": Obj({"offset": vec(3), "normal": vec(3)})})})})}), skip=True),
    "colliderGroups": Arr(Obj({"name": Str(), "colliders": Arr(ANY_INT, skip=True)}), skip=True),
    "springs": Arr(Obj({
        "name": Str(), "center": ANY_INT, "colliderGroups": Arr(ANY_INT, skip=True),
        "joints": (Arr(Obj({"node": (ANY_INT, REQ), "hitRadius": (NUM, FATAL), "stiffness": (NUM, FATAL),
                            "gravityPower": (NUM, FATAL), "dragForce": (NUM, FATAL), "gravityDir": (vec(3), FATAL)})),
                   FATAL)})),
})

VRM_ANIMATION = Obj({
    "specVersion": Str(),
    "humanoid": Obj({"humanBones": Obj(values=Obj({"node": (IDX, REQ)}))}),
    "expressions": Obj({"preset": Obj(values=Obj({"node": (IDX, REQ)})),
                        "custom": Obj(values=Obj({"node": (IDX, REQ)}))}),
    "lookAt": Obj({"node": IDX, "offsetFromHeadBone": vec(3)}),
})

#: The whole document: glTF 2.0 core as the builders read it, plus the VRM extensions.
DOCUMENT = Obj({
    "asset": (Obj({"version": (Str(), REQ), "generator": Str(), "copyright": Str(), "minVersion": Str()}), REQ),
    "extensionsUsed": Arr(Str(), skip=True), "extensionsRequired": Arr(Str(), skip=True),
    "scene": IDX, "scenes": Arr(Obj({"nodes": Arr(IDX, skip=True), "name": Str()}), skip=True),
    "nodes": (Arr(NODE), FATAL), "meshes": (Arr(Obj({"primitives": (Arr(PRIMITIVE, lo=1), REQ), "weights": Arr(NUM),
                                                  "name": Str(), "extras": Obj({"targetNames": Arr(Str())})})),
                                    FATAL),
    "skins": (Arr(Obj({"joints": (Arr(IDX, lo=1), REQ), "inverseBindMatrices": (IDX, FATAL), "skeleton": IDX,
                       "name": Str()})), FATAL),
    "accessors": (Arr(ACCESSOR), FATAL), "bufferViews": (Arr(BUFFER_VIEW), FATAL),
    "buffers": (Arr(Obj({"byteLength": (Int(1, MAX_BYTES), REQ), "uri": (Str(), FATAL), "name": Str()})), FATAL),
    "materials": Arr(MATERIAL, skip=True),
    "textures": Arr(Obj({"source": IDX, "sampler": IDX, "name": Str()}), skip=True),
    "samplers": Arr(Obj({"magFilter": Int(0, 2 ** 16), "minFilter": Int(0, 2 ** 16), "wrapS": Int(0, 2 ** 16),
                         "wrapT": Int(0, 2 ** 16)}), skip=True),
    "images": Arr(Obj({"bufferView": IDX, "uri": Str(), "mimeType": Str(), "name": Str()}), skip=True),
    "animations": (Arr(ANIMATION), FATAL),
    "extensions": Obj({"VRM": (VRM0, FATAL), "VRMC_vrm": (VRMC_VRM, FATAL), "VRMC_springBone": SPRING_BONE,
                       "VRMC_vrm_animation": (VRM_ANIMATION, FATAL)}),
})


def check_document(doc: dict, issues: Issues) -> dict:
    """A glTF document (parsed JSON) checked against :data:`DOCUMENT` (module doc).

    Returns:
        A copy whose every object along the declared shapes is new (the input is not
        changed); wrong optional values are gone, with a warning each in ``issues``.

    Raises:
        AvatarError: a wrong required value (file and JSON path in the message).
    """
    return check(DOCUMENT, doc, "", issues)
