"""Renderer features on tiny synthetic scenes with exactly known pixels (headless GL)."""

from __future__ import annotations

import numpy as np
import pytest

import render
from avatars import Expression, Material, MorphTargetBind, MToon, TextureRef, TextureTransform
from render.materials import BLOCK_SIZE, TEXTURE_SLOTS, pack_material
from render.morphs import active_targets
from render.shaders import MAX_MORPHS

from . import synthetic as syn

SRGB_LEVELS = 1        # 8-bit rounding of one sRGB encode
SIZE = (320, 180)
CENTER = (90, 160)     # (row, col) of the image centre
HALF = 27              # half side (px) of a 0.5 m quad at z = 0 seen by syn.CAMERA: 90 / tan(22.5°) / 8 ~ 27.2


def draw(renderer, av, world=None, weights=None, **kw):
    renderer.set_avatar(av)
    renderer.draw(world, weights, camera=kw.pop("camera", syn.CAMERA), **kw)
    return renderer.read_rgba()


def coverage_box(rgba, background=None):
    """(row0, row1, col0, col1) inclusive bounds of pixels with alpha > 0 (or != background)."""
    mask = rgba[..., 3] > 0 if background is None else np.any(rgba[..., :3] != background, axis=-1)
    rows, cols = np.nonzero(mask)
    return rows.min(), rows.max(), cols.min(), cols.max()


def test_unlit_base_color_is_linear_and_encoded_to_srgb(make_renderer):
    r = make_renderer(SIZE)
    img = draw(r, syn.avatar([syn.quad()], [syn.unlit((0.5, 0.2, 0.0, 1.0))]))
    px = img[CENTER].astype(int)
    assert np.all(np.abs(px - [syn.srgb8(0.5), syn.srgb8(0.2), 0, 255]) <= SRGB_LEVELS), px
    assert tuple(img[0, 0]) == (0, 0, 0, 0)
    r0, r1, c0, c1 = coverage_box(img)
    assert abs((r1 - r0 + 1) / 2 - HALF) <= 1 and abs((c1 - c0 + 1) / 2 - HALF) <= 1
    assert abs((r0 + r1) / 2 - CENTER[0]) <= 1 and abs((c0 + c1) / 2 - CENTER[1]) <= 1


def test_backfaces_are_culled_unless_double_sided(make_renderer):
    r = make_renderer(SIZE)
    away = syn.quad(facing=-1)
    assert draw(r, syn.avatar([away], [syn.unlit()]))[..., 3].max() == 0
    assert draw(r, syn.avatar([away], [syn.unlit(double_sided=True)]))[CENTER][3] == 255
    assert draw(r, syn.avatar([syn.quad()], [syn.unlit()]))[CENTER][3] == 255


CHECKER = [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255), (255, 255, 255, 255)]


def _quadrants(img):
    d = HALF // 2
    (r, c) = CENTER
    return [tuple(img[r - d, c - d, :3]), tuple(img[r - d, c + d, :3]), tuple(img[r + d, c - d, :3]),
            tuple(img[r + d, c + d, :3])]


def test_base_color_texture_uv_orientation_and_texture_transform(make_renderer):
    r = make_renderer(SIZE)
    images, textures, ref = syn.checker_texture(CHECKER)
    av = syn.avatar([syn.quad()], [syn.unlit(base_color_texture=ref)], images=images, textures=textures)
    # glTF uv (0, 0) is the image's top-left texel: the quad shows the image upright.
    assert _quadrants(draw(r, av)) == [c[:3] for c in CHECKER]
    shifted = TextureRef(texture=0, transform=TextureTransform(offset=np.array([0.5, 0.0])))
    av = syn.avatar([syn.quad()], [syn.unlit(base_color_texture=shifted)], images=images, textures=textures)
    q = _quadrants(draw(r, av))
    assert q == [CHECKER[1][:3], CHECKER[0][:3], CHECKER[3][:3], CHECKER[2][:3]]  # repeat wrap


def test_alpha_mask_discards_below_cutoff_and_blend_mixes(make_renderer):
    r = make_renderer(SIZE, background="#000000")
    colors = [(255, 255, 255, 40), (255, 255, 255, 255), (255, 255, 255, 255), (255, 255, 255, 200)]
    images, textures, ref = syn.checker_texture(colors)
    mask = syn.unlit(base_color_texture=ref, alpha_mode="MASK", alpha_cutoff=0.5)
    q = _quadrants(draw(r, syn.avatar([syn.quad()], [mask], images=images, textures=textures)))
    assert q[0] == (0, 0, 0) and q[1] == q[2] == q[3] == (255, 255, 255)
    opaque = syn.unlit(base_color_texture=ref)
    q = _quadrants(draw(r, syn.avatar([syn.quad()], [opaque], images=images, textures=textures)))
    assert q[0] == (255, 255, 255)  # OPAQUE ignores alpha
    blend = syn.unlit(base_color_texture=ref, alpha_mode="BLEND")
    q = _quadrants(draw(r, syn.avatar([syn.quad()], [blend], images=images, textures=textures)))
    assert abs(q[0][0] - syn.srgb8(40 / 255)) <= SRGB_LEVELS and q[1] == (255, 255, 255)


def test_blended_primitives_are_drawn_back_to_front(make_renderer):
    r = make_renderer(SIZE, background="#000000")
    red = syn.unlit((1.0, 0.0, 0.0, 0.5), alpha_mode="BLEND")
    blue = syn.unlit((0.0, 0.0, 1.0, 0.5), alpha_mode="BLEND")
    near_first = [syn.quad((0.0, 0.0, 0.3), material=1), syn.quad((0.0, 0.0, 0.0), material=0)]
    px = draw(r, syn.avatar(near_first, [red, blue]))[CENTER]
    # far red first, then near blue over it: 0.5 blue + 0.5 (0.5 red) over black
    assert abs(int(px[0]) - syn.srgb8(0.25)) <= SRGB_LEVELS and abs(int(px[2]) - syn.srgb8(0.5)) <= SRGB_LEVELS, px


def test_transparent_background_gives_straight_alpha(make_renderer):
    r = make_renderer(SIZE)
    px = draw(r, syn.avatar([syn.quad()], [syn.unlit((1.0, 0.5, 0.0, 0.25), alpha_mode="BLEND")]))[CENTER]
    assert abs(int(px[3]) - 64) <= 1
    assert abs(int(px[0]) - 255) <= SRGB_LEVELS and abs(int(px[1]) - syn.srgb8(0.5)) <= 2, px


def test_skinning_moves_vertices_with_joint_matrices(make_renderer):
    r = make_renderer(SIZE)
    av = syn.avatar([syn.quad(joint=1)], [syn.unlit()], nodes=2, skin_joints=[0, 1])
    base = coverage_box(draw(r, av))
    world = av.skeleton.rest_world.copy()
    world[1][:3, 3] = [0.25, 0.0, 0.0]  # half a quad to the right: HALF px
    moved = coverage_box(draw(r, av, world))
    assert abs((moved[2] - base[2]) - HALF) <= 1 and moved[0] == base[0]
    world = av.skeleton.rest_world.copy()
    world[0][:3, 3] = [0.25, 0.0, 0.0]  # joint 0 has no weight
    assert coverage_box(draw(r, av, world)) == base


@pytest.mark.parametrize("n,storage", [(300, "ubo"), (300, "texture"), (2000, "auto")])
def test_skeletons_past_the_uniform_limit_are_skinned(make_renderer, n, storage):
    """VRoid-sized skeletons (> 256 joints) in the uniform block or the joint texture; 2000
    matrices exceed any uniform block and fall back to the texture."""
    r = make_renderer(SIZE, joint_storage=storage)
    prims = [syn.quad((-0.5, 0.0, 0.0), 0.2, joint=5), syn.quad((0.5, 0.0, 0.0), 0.2, joint=n - 1)]
    av = syn.avatar(prims, [syn.unlit()], nodes=n, skin_joints=list(range(n)))
    base = draw(r, av)
    world = av.skeleton.rest_world.copy()
    world[n - 1][:3, 3] = [0.0, 0.3, 0.0]
    moved = draw(r, av, world)
    left = np.s_[:, : SIZE[0] // 2]
    right = np.s_[:, SIZE[0] // 2:]
    assert np.array_equal(base[left], moved[left])
    rb, rm = coverage_box(base[right]), coverage_box(moved[right])
    assert rm[0] < rb[0] - 10  # the last joint moved its quad up
    assert r.gpu.joints.storage == ("texture" if n == 2000 else storage)


def test_morph_targets_from_weights_and_expressions(make_renderer):
    r = make_renderer(SIZE)
    av = syn.avatar([syn.quad(morph=(0.25, 0.0, 0.0))], [syn.unlit()], target_names=("aa",))
    av = type(av)(**{**av.__dict__, "expressions": {
        "aa": Expression(name="aa", preset=True, morph_target_binds=(MorphTargetBind(node=0, index=0, weight=1.0),))}})
    base = coverage_box(draw(r, av))
    moved = coverage_box(draw(r, av, None, [np.array([1.0], np.float32)]))
    assert abs(moved[2] - base[2] - HALF) <= 1
    half = coverage_box(draw(r, av, None, {"aa": 0.5}))
    assert abs(half[2] - base[2] - HALF / 2) <= 1
    assert render.expression_weights(av, {"aa": 0.5})[0][0] == pytest.approx(0.5)


def test_active_morph_targets_keep_the_largest_weights():
    idx, w = np.zeros(MAX_MORPHS, np.int32), np.zeros(MAX_MORPHS, np.float32)
    weights = np.zeros(100)
    weights[::2] = np.linspace(0.01, 1.0, 50)
    n = active_targets(weights, idx, w)
    assert n == MAX_MORPHS and set(idx) == set(np.argsort(-weights)[:MAX_MORPHS])
    assert active_targets(np.zeros(5), idx, w) == 0


def _mtoon(**kw):
    return Material(base_color_factor=np.array([1.0, 1.0, 1.0, 1.0]),
                    mtoon=MToon(shade_color=np.array([0.0, 0.0, 0.5]), shading_toony=0.9, **kw))


def test_mtoon_lit_and_shade_colours(make_renderer):
    no_ambient = dict(ambient=np.zeros(3), color=np.ones(3))
    front = make_renderer(SIZE, lighting=render.Lighting(direction=np.array([0.0, 0.0, 1.0]), **no_ambient))
    back = make_renderer(SIZE, lighting=render.Lighting(direction=np.array([0.0, 0.0, -1.0]), **no_ambient))
    av = syn.avatar([syn.quad()], [_mtoon()])
    assert tuple(draw(front, av)[CENTER][:3]) == (255, 255, 255)
    px = draw(back, av)[CENTER].astype(int)
    assert np.all(np.abs(px[:3] - [0, 0, syn.srgb8(0.5)]) <= SRGB_LEVELS), px


def _cube(size=0.5):
    h = size / 2
    corners = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)], np.float32)
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    idx = []
    for a, b, c, d in faces:
        idx += [a, b, c, a, c, d]
    from avatars import Primitive

    normals = corners / np.linalg.norm(corners, axis=1, keepdims=True)
    return Primitive(positions=corners, indices=np.array(idx, np.uint32), normals=normals.astype(np.float32),
                     material=0)


@pytest.mark.parametrize("mode,width", [("worldCoordinates", 0.04), ("screenCoordinates", 0.03)])
def test_mtoon_outline_is_an_inverted_hull(make_renderer, mode, width):
    r = make_renderer(SIZE, background="#000000")
    plain = syn.avatar([_cube()], [Material(base_color_factor=np.array([1.0, 1.0, 1.0, 1.0]), unlit=True,
                                           mtoon=MToon(shade_color=np.ones(3)))])
    a = draw(r, plain)
    outlined = syn.avatar([_cube()], [Material(base_color_factor=np.array([1.0, 1.0, 1.0, 1.0]), mtoon=MToon(
        shade_color=np.ones(3), outline_width_mode=mode, outline_width=width, outline_color=np.array([1.0, 0.0, 0.0]),
        outline_lighting_mix=0.0))])
    b = draw(r, outlined)
    ring = np.all(b[..., :3] == (255, 0, 0), axis=-1)
    assert ring.sum() > 100
    assert not np.any(ring & np.any(a[..., :3] != 0, axis=-1))  # the ring is outside the cube's silhouette


def test_material_block_layout_matches_glsl(gl_context, make_renderer):
    from render._gl import GL

    r = make_renderer((16, 16))
    prog = r.programs.mesh_for(False, False, features=("LIGHTING_MTOON", "MTOON_RIM")).id
    n = GL.glGetProgramiv(prog, GL.GL_ACTIVE_UNIFORMS)
    offsets = {}
    for i in range(n):
        name = GL.glGetActiveUniform(prog, i)[0]
        name = name.decode() if isinstance(name, bytes) else name
        if name.startswith("m_"):
            out = (GL.GLint * 1)()
            GL.glGetActiveUniformsiv(prog, 1, (GL.GLuint * 1)(i), GL.GL_UNIFORM_OFFSET, out)
            offsets[name] = int(out[0])
    expected = {"m_base_color": 0, "m_shade_color": 16, "m_rim_color": 32, "m_emissive": 48, "m_outline_color": 64,
                "m_matcap_color": 80, "m_params0": 96, "m_params1": 112, "m_uv_anim": 128, "m_flags": 144,
                "m_tex_xform[0]": 160}
    assert {k: offsets[k] for k in expected} == expected
    assert len(pack_material(Material())) == BLOCK_SIZE == 160 + 2 * 16 * len(TEXTURE_SLOTS)


def test_background_modes(make_renderer):
    av = syn.avatar([syn.quad()], [syn.unlit()])
    for spec, rgb in (("#336699", (0x33, 0x66, 0x99)), ("chroma", (0, 255, 0)), ((10, 20, 30), (10, 20, 30))):
        r = make_renderer((32, 18), background=spec)
        assert tuple(draw(r, av)[0, 0]) == rgb + (255,)
    with pytest.raises(ValueError):
        render.Background.parse("#12345")


def test_hide_instances_and_resize(make_renderer):
    r = make_renderer(SIZE)
    av = syn.avatar([syn.quad()], [syn.unlit()])
    r.set_avatar(av)
    r.draw(camera=syn.CAMERA, hide={0})
    assert r.read_rgba()[..., 3].max() == 0
    r.resize((160, 90))
    r.draw(camera=syn.CAMERA)
    img = r.read_rgba()
    assert img.shape == (90, 160, 4) and img[45, 80, 3] == 255


def test_async_readback_returns_the_previous_frame(make_renderer):
    r = make_renderer((64, 36))
    av = syn.avatar([syn.quad(joint=0)], [syn.unlit()], skin_joints=[0])
    r.set_avatar(av)
    expected = []
    got = []
    for k in range(4):
        world = av.skeleton.rest_world.copy()
        world[0][:3, 3] = [0.1 * k, 0.0, 0.0]
        r.draw(world, camera=syn.CAMERA)
        expected.append(r.read_rgba())
        res = r.read_rgba_async(tag=k)
        got.append(res)
    assert got[0] is None
    for k in range(1, 4):
        img, tag = got[k]
        assert tag == k - 1 and np.array_equal(img, expected[k - 1])


def test_flush_readback_returns_the_last_queued_frame_and_reads_are_counted(make_renderer):
    r = make_renderer((64, 36))
    av = syn.avatar([syn.quad(joint=0)], [syn.unlit()], skin_joints=[0])
    r.set_avatar(av)
    assert r.flush_readback() is None and r.pixel_reads == 0     # nothing queued, nothing read
    expected, got = [], []
    for k in range(3):
        world = av.skeleton.rest_world.copy()
        world[0][:3, 3] = [0.1 * k, 0.0, 0.0]
        r.draw(world, camera=syn.CAMERA)
        expected.append(r.read_rgba())
        res = r.read_rgba_async(tag=k)
        if res is not None:
            got.append(res)
    last = r.flush_readback(out=np.empty((36, 64, 4), np.uint8))
    assert last is not None and r.flush_readback() is None     # the last frame once, then nothing
    got.append(last)
    assert [tag for _, tag in got] == [0, 1, 2]                # every frame, in order
    for img, tag in got:
        assert np.array_equal(img, expected[tag])
    assert r.pixel_reads == 6                                  # 3 synchronous + 3 queued; flushing reads none


class _Collect:
    needs_pixels = True

    def __init__(self):
        self.frames = []

    def send(self, rgba, t_ns):
        self.frames.append((rgba.copy(), t_ns))

    def close(self):
        pass


@pytest.mark.parametrize("immediate", [True, False])
def test_outputs_deliver_each_frame_as_drawn_when_immediate(make_renderer, immediate):
    """The live latency path (issue 20): with ``immediate`` a sink has frame k's pixels when
    ``send`` for frame k returns; through the PBO double buffer it gets them with frame k + 1
    (and the last one at the flush). Same pixels, same order either way."""
    from runtime.outputs import Outputs

    r = make_renderer((64, 36))
    av = syn.avatar([syn.quad(joint=0)], [syn.unlit()], skin_joints=[0])
    r.set_avatar(av)
    sink = _Collect()
    out = Outputs([sink], ["video:x.mp4"], r, immediate=immediate)
    expected, delivered_after_send = [], []
    for k in range(4):
        world = av.skeleton.rest_world.copy()
        world[0][:3, 3] = [0.1 * k, 0.0, 0.0]
        r.draw(world, camera=syn.CAMERA)
        expected.append(r.read_rgba())
        out.send(1000 + k)
        delivered_after_send.append([t for _, t in sink.frames])
    out.close()
    if immediate:
        assert delivered_after_send == [[1000], [1000, 1001], [1000, 1001, 1002], [1000, 1001, 1002, 1003]]
    else:
        assert delivered_after_send == [[], [1000], [1000, 1001], [1000, 1001, 1002]]
    assert [t for _, t in sink.frames] == [1000, 1001, 1002, 1003]
    assert len({e.tobytes() for e in expected}) == 4                 # the frames differ
    for (img, t), e in zip(sink.frames, expected):
        assert np.array_equal(img, e)


def test_viewport_panes_share_one_framebuffer(make_renderer):
    """Two panes side by side: each is exactly what a renderer of the pane's size draws."""
    av = syn.avatar([syn.quad(joint=0)], [syn.unlit()], skin_joints=[0])
    worlds = []
    for dx in (0.0, 0.2):
        w = av.skeleton.rest_world.copy()
        w[0][:3, 3] = [dx, 0.0, 0.0]
        worlds.append(w)
    half = make_renderer((80, 90), background="#336699")
    half.set_avatar(av)
    refs = []
    for w in worlds:
        half.draw(w, camera=syn.CAMERA)
        refs.append(half.read_rgba())
    r = make_renderer((160, 90), background="#336699")
    r.set_avatar(av)
    r.draw(worlds[0], camera=syn.CAMERA, viewport=(0, 0, 80, 90))
    r.draw(worlds[1], camera=syn.CAMERA, viewport=(80, 0, 80, 90))
    img = r.read_rgba()
    assert np.array_equal(img[:, :80], refs[0]) and np.array_equal(img[:, 80:], refs[1])
    assert not np.array_equal(refs[0], refs[1])
    # y counts rows from the top: a top pane leaves the bottom rows alone
    r.draw(worlds[1], camera=syn.CAMERA, viewport=(0, 0, 160, 45))
    top = r.read_rgba()
    assert np.array_equal(top[45:], img[45:]) and not np.array_equal(top[:45], img[:45])
    with pytest.raises(ValueError, match="viewport"):
        r.draw(worlds[0], camera=syn.CAMERA, viewport=(100, 0, 80, 90))


def test_a_panes_hud_survives_the_next_pane_with_msaa(make_renderer):
    av = syn.avatar([syn.quad(size=0.1)], [syn.unlit((0.0, 0.0, 0.0, 1.0))])
    r = make_renderer((320, 180), background="#000000", samples=4)
    r.set_avatar(av)
    r.draw(camera=syn.CAMERA, viewport=(0, 0, 160, 180))
    r.draw(camera=syn.CAMERA, viewport=(160, 0, 160, 180))
    base = r.read_rgba()
    r.draw(camera=syn.CAMERA, viewport=(0, 0, 160, 180), hud=render.HudInfo(fps=60.0, substeps=2))
    r.draw(camera=syn.CAMERA, viewport=(160, 0, 160, 180))
    both = r.read_rgba()
    assert np.any(both[:40, :120] != base[:40, :120])           # the left pane's HUD is still there
    assert np.array_equal(both[:, 160:], base[:, 160:])


def test_hud_and_overlays_draw_pixels(make_renderer):
    r = make_renderer(SIZE, background="#000000")
    av = syn.avatar([syn.quad(size=0.1)], [syn.unlit((0.0, 0.0, 0.0, 1.0))])
    base = draw(r, av)
    hud = draw(r, av, hud=render.HudInfo(fps=60.0, tracker_latency_ms=12.5, substeps=2))
    assert np.any(hud[:40, :120] != base[:40, :120]) and np.array_equal(hud[100:], base[100:])
    ov = render.Overlays(colliders=[("sphere", np.zeros(3), np.zeros(3), 0.5)],
                         spring_chains=[np.array([[0.0, 0.0, 0.0], [0.0, -0.5, 0.0]])])
    lines = draw(r, av, overlays=ov)
    changed = np.any(lines != base, axis=-1)
    rows, cols = np.nonzero(changed)
    radius_px = 0.5 * 90 / np.tan(np.radians(22.5)) / 2
    assert cols.max() - CENTER[1] == pytest.approx(radius_px, abs=3)


def test_present_needs_a_window(make_renderer, gl_context):
    if gl_context.backend != "egl":
        pytest.skip("the session context is a window")
    r = make_renderer((16, 16))
    with pytest.raises(RuntimeError, match="window"):
        r.present()


def test_mtoon_rim_and_emissive_add_light(make_renderer):
    dark = render.Lighting(direction=np.array([0.0, 0.0, -1.0]), ambient=np.zeros(3))  # lit from behind
    r = make_renderer(SIZE, lighting=dark)
    black = Material(base_color_factor=np.array([1.0, 1.0, 1.0, 1.0]), mtoon=MToon(shade_color=np.zeros(3)))
    assert tuple(draw(r, syn.avatar([syn.quad()], [black]))[CENTER][:3]) == (0, 0, 0)
    rim = Material(base_color_factor=np.array([1.0, 1.0, 1.0, 1.0]), mtoon=MToon(
        shade_color=np.zeros(3), rim_color=np.array([0.5, 0.0, 0.0]), rim_fresnel_power=1.0, rim_lift=1.0,
        rim_lighting_mix=0.0))
    px = draw(r, syn.avatar([syn.quad()], [rim]))[CENTER].astype(int)
    assert abs(px[0] - syn.srgb8(0.5)) <= SRGB_LEVELS and px[1] == px[2] == 0
    glow = Material(base_color_factor=np.array([1.0, 1.0, 1.0, 1.0]), emissive_factor=np.array([0.0, 0.2, 0.0]),
                    mtoon=MToon(shade_color=np.zeros(3)))
    px = draw(r, syn.avatar([syn.quad()], [glow]))[CENTER].astype(int)
    assert abs(px[1] - syn.srgb8(0.2)) <= SRGB_LEVELS and px[0] == px[2] == 0
