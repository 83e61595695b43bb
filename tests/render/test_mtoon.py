"""MToon (as three-vrm 3.5.5 computes it), glTF PBR, samplers, render order and
anti-aliasing on tiny synthetic scenes: every property changes pixels where it says.

Scenes: syn.CAMERA looks at the origin from z = 2; a 0.5 m quad there covers the image centre
(±27 px); its uv u grows with x, so the texture's left half (u < 0.5) is on the screen's left.
Colours are linear; expected pixels are their 8-bit sRGB encodings (±``SRGB_LEVELS``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import render
from avatars import Material, MToon, Sampler, TextureRef

from . import synthetic as syn

pytestmark = pytest.mark.gl

SIZE = (320, 180)
CENTER = (90, 160)
LEFT, RIGHT = (90, 145), (90, 175)      # (row, col) inside the quad's left / right half
SRGB_LEVELS = 2                         # 8-bit rounding plus float differences between GL drivers


def light(direction=(0.0, 0.0, 1.0), color=1.0, ambient=0.0) -> render.Lighting:
    return render.Lighting(direction=np.asarray(direction, float), color=np.full(3, float(color)),
                           ambient=np.full(3, float(ambient)))


def mtoon(base=(1.0, 1.0, 1.0, 1.0), **kw) -> Material:
    mat_kw = {k: kw.pop(k) for k in ("emissive_factor", "emissive_texture", "normal_texture", "normal_scale",
                                     "base_color_texture", "alpha_mode", "double_sided") if k in kw}
    kw.setdefault("shade_color", np.zeros(3))
    return Material(base_color_factor=np.asarray(base, float), mtoon=MToon(**kw), **mat_kw)


def draw(r, prims, materials, *, time_s=0.0, images=(), textures=(), camera=syn.CAMERA):
    r.set_avatar(syn.avatar(prims, materials, images=images, textures=textures))
    r.draw(camera=camera, time_s=time_s)
    return r.read_rgba()


def px(img, at):
    return img[at][:3].astype(int)


def near(value, linear, tol=SRGB_LEVELS):
    return abs(int(value) - syn.srgb8(linear)) <= tol


# ---------------------------------------------------------------------------- lit, shade, ambient

def test_lit_shade_and_ambient_add_up_without_a_cap(make_renderer):
    """colour = mix(shade, lit, shading) x light + ambient x lit (three-vrm; no min(., lit))."""
    mat = mtoon(base=(0.5, 0.5, 0.5, 1.0), shade_color=np.full(3, 0.2))
    front = draw(make_renderer(SIZE, lighting=light((0, 0, 1), 1.0, 0.5)), [syn.quad()], [mat])
    assert all(near(c, 0.5 + 0.25) for c in px(front, CENTER)), px(front, CENTER)
    back = draw(make_renderer(SIZE, lighting=light((0, 0, -1), 1.0, 0.5)), [syn.quad()], [mat])
    assert all(near(c, 0.2 + 0.25) for c in px(back, CENTER)), px(back, CENTER)


@pytest.mark.parametrize("shift,toony,expected", [(0.0, 0.9, 0.5), (0.05, 0.9, 0.75), (0.05, 0.5, 0.55),
                                                  (-0.2, 0.9, 0.0)])
def test_shading_shift_and_toony(make_renderer, shift, toony, expected):
    """Light along +X, N.L = 0: shading = linearstep(-1 + toony, 1 - toony, shift)."""
    r = make_renderer(SIZE, lighting=light((1, 0, 0)))
    img = draw(r, [syn.quad()], [mtoon(shading_shift=shift, shading_toony=toony)])
    assert all(near(c, expected) for c in px(img, CENTER)), (px(img, CENTER), expected)


def test_shading_shift_texture_shifts_where_its_red_is(make_renderer):
    images, textures = syn.textures(syn.halves((255, 0, 0, 255), (0, 0, 0, 255)))
    r = make_renderer(SIZE, lighting=light((1, 0, 0)))
    mat = mtoon(shading_toony=0.9, shading_shift_texture=TextureRef(0), shading_shift_texture_scale=0.05)
    img = draw(r, [syn.quad()], [mat], images=images, textures=textures)
    assert near(px(img, LEFT)[0], 0.75) and near(px(img, RIGHT)[0], 0.5), (px(img, LEFT), px(img, RIGHT))


def test_shade_multiply_texture(make_renderer):
    images, textures = syn.textures(syn.halves((255, 255, 255, 255), (0, 0, 0, 255)))
    r = make_renderer(SIZE, lighting=light((0, 0, -1)))
    img = draw(r, [syn.quad()], [mtoon(shade_color=np.array([0.0, 0.5, 0.0]), shade_texture=TextureRef(0))],
               images=images, textures=textures)
    assert near(px(img, LEFT)[1], 0.5) and px(img, RIGHT)[1] == 0


# ---------------------------------------------------------------------------- rim, matcap

def test_rim_is_not_multiplied_by_the_shading(make_renderer):
    """Lit from behind (fully shaded), rim lighting mix 1: rim x (light + ambient), not x 0."""
    r = make_renderer(SIZE, lighting=light((0, 0, -1), 0.6, 0.4))
    mat = mtoon(base=(0, 0, 0, 1), rim_color=np.array([0.5, 0.0, 0.0]), rim_fresnel_power=1.0, rim_lift=1.0,
                rim_lighting_mix=1.0)
    c = px(draw(r, [syn.quad()], [mat]), CENTER)
    assert near(c[0], 0.5) and c[1] == c[2] == 0, c


@pytest.mark.parametrize("mix,expected", [(0.0, 0.5), (0.5, 0.35), (1.0, 0.2)])
def test_rim_lighting_mix(make_renderer, mix, expected):
    """rim x mix(1, light + ambient, rimLightingMix): under a dim light (0.3 + 0.1) mix 0 keeps
    the rim colour, mix 1 scales it by 0.4."""
    r = make_renderer(SIZE, lighting=light((0, 0, -1), 0.3, 0.1))
    mat = mtoon(base=(0, 0, 0, 1), rim_color=np.array([0.5, 0.0, 0.0]), rim_fresnel_power=1.0, rim_lift=1.0,
                rim_lighting_mix=mix)
    c = px(draw(r, [syn.quad()], [mat]), CENTER)
    assert near(c[0], expected) and c[1] == c[2] == 0, (c, expected)


def test_rim_fresnel_power_and_lift(make_renderer):
    """Facing the camera N.V = 1: rim = colour x (lift)^power."""
    r = make_renderer(SIZE, lighting=light((0, 0, -1)))
    mat = mtoon(base=(0, 0, 0, 1), rim_color=np.array([1.0, 0.0, 0.0]), rim_fresnel_power=2.0, rim_lift=0.5,
                rim_lighting_mix=0.0)
    assert near(px(draw(r, [syn.quad()], [mat]), CENTER)[0], 0.25)


def test_rim_multiply_texture_masks_the_rim(make_renderer):
    images, textures = syn.textures(syn.halves((255, 255, 255, 255), (0, 0, 0, 255)))
    r = make_renderer(SIZE, lighting=light((0, 0, -1)))
    mat = mtoon(base=(0, 0, 0, 1), rim_color=np.array([0.5, 0.0, 0.0]), rim_fresnel_power=1.0, rim_lift=1.0,
                rim_lighting_mix=0.0, rim_multiply_texture=TextureRef(0))
    img = draw(r, [syn.quad()], [mat], images=images, textures=textures)
    assert near(px(img, LEFT)[0], 0.5) and px(img, RIGHT)[0] == 0


def test_matcap_samples_the_view_space_normal(make_renderer):
    """Matcap image: green top half, blue bottom half; a normal tilted up samples the top."""
    top_bottom = np.zeros((8, 8, 4), np.uint8)
    top_bottom[:4] = (0, 255, 0, 255)
    top_bottom[4:] = (0, 0, 255, 255)
    images, textures = syn.textures(top_bottom)
    r = make_renderer(SIZE, lighting=light((0, 0, -1)))
    mats = [mtoon(base=(0, 0, 0, 1), matcap_texture=TextureRef(0), rim_lighting_mix=0.0)]
    up = px(draw(r, [syn.quad_with_normal((0, 1, 1))], mats, images=images, textures=textures), CENTER)
    down = px(draw(r, [syn.quad_with_normal((0, -1, 1))], mats, images=images, textures=textures), CENTER)
    assert tuple(up) == (0, 255, 0) and tuple(down) == (0, 0, 255), (up, down)
    scaled = [mtoon(base=(0, 0, 0, 1), matcap_texture=TextureRef(0), matcap_color=np.full(3, 0.5),
                    rim_lighting_mix=0.0)]
    assert near(px(draw(r, [syn.quad_with_normal((0, 1, 1))], scaled, images=images, textures=textures),
                   CENTER)[1], 0.5)


# ---------------------------------------------------------------------------- normal map, emission

@pytest.mark.parametrize("light_dir,encoded", [((1, 0, 0), (204, 128, 230)), ((0, 1, 0), (128, 204, 230))])
def test_normal_map_tilts_the_normal(make_renderer, light_dir, encoded):
    """Tangent-space (0.6, 0, 0.8) tilts toward +u (screen right, +X) and (0, 0.6, 0.8) toward
    the image's top (glTF's +Y, here +Y): lit by a light there; the flat half stays at N.L = 0."""
    images, textures = syn.textures(syn.halves((*encoded, 255), (128, 128, 255, 255)))
    r = make_renderer(SIZE, lighting=light(light_dir))
    mat = mtoon(normal_texture=TextureRef(0), shading_toony=0.9)
    img = draw(r, [syn.quad()], [mat], images=images, textures=textures)
    assert px(img, LEFT)[0] == 255 and near(px(img, RIGHT)[0], 0.5, tol=12), (px(img, LEFT), px(img, RIGHT))
    flat = draw(r, [syn.quad()], [mtoon(normal_texture=TextureRef(0), normal_scale=0.0, shading_toony=0.9)],
                images=images, textures=textures)
    assert near(px(flat, LEFT)[0], 0.5, tol=12)   # normal scale 0: the map has no effect


def test_emissive_texture_adds_where_it_is_bright(make_renderer):
    images, textures = syn.textures(syn.halves((255, 255, 255, 255), (0, 0, 0, 255)))
    r = make_renderer(SIZE, lighting=light((0, 0, -1)))
    mat = mtoon(base=(0, 0, 0, 1), emissive_factor=np.array([0.0, 0.5, 0.0]), emissive_texture=TextureRef(0))
    img = draw(r, [syn.quad()], [mat], images=images, textures=textures)
    assert near(px(img, LEFT)[1], 0.5) and px(img, RIGHT)[1] == 0


# ---------------------------------------------------------------------------- outlines

def _ring(img, color=(255, 0, 0)):
    return np.all(img[..., :3] == color, axis=-1)


def _outlined(width=0.03, mode="worldCoordinates", mix=0.0, **kw):
    return mtoon(base=(1, 1, 1, 1), shade_color=np.ones(3), outline_width_mode=mode, outline_width=width,
                 outline_color=np.array([1.0, 0.0, 0.0]), outline_lighting_mix=mix, **kw)


def test_outline_width_texture_of_zero_leaves_no_outline_there(make_renderer):
    """G = 0 where u < 0.5 (the sphere's x < 0, the screen's left): no outline on that side."""
    images, textures = syn.textures(syn.halves((0, 0, 0, 255), (0, 255, 0, 255)))
    r = make_renderer(SIZE, background="#000000")
    img = draw(r, [syn.sphere()], [_outlined(outline_width_multiply_texture=TextureRef(0))], images=images,
               textures=textures)
    ring = _ring(img)
    assert ring[:, 170:].sum() > 100 and ring[:, :150].sum() == 0
    full = _ring(draw(r, [syn.sphere()], [_outlined()]))
    assert full[:, :150].sum() > 100


def test_outlines_setting_off_draws_no_outline_and_on_draws_it(make_renderer):
    """render.quality: "off" skips the inverted hull (no ring, no outline draw); "on" (the
    renderer's default) draws it; "auto" is off on llvmpipe, on with a GPU."""
    on = make_renderer(SIZE, background="#000000")
    off = make_renderer(SIZE, background="#000000", outlines="off")
    auto = make_renderer(SIZE, background="#000000", outlines="auto")
    assert on.outlines is True and off.outlines is False
    assert _ring(draw(on, [syn.sphere()], [_outlined()])).sum() > 100 and on.stats.outlines == 1
    assert _ring(draw(off, [syn.sphere()], [_outlined()])).sum() == 0 and off.stats.outlines == 0
    from render.antialias import is_software
    from render._gl import GL

    assert auto.outlines is not is_software((GL.glGetString(GL.GL_RENDERER) or b"").decode())


@pytest.mark.parametrize("mode", ["worldCoordinates", "screenCoordinates"])
def test_outline_width_mode(make_renderer, mode):
    """Ring thickness (px, beside the sphere's equator): world metres shrink with distance,
    screen widths do not (a fraction of the viewport height: 0.05 x 90 px = 4.5 px)."""
    r = make_renderer(SIZE, background="#000000")
    thick = []
    for z in (0.0, -2.0):
        img = draw(r, [syn.sphere(center=(0.0, 0.0, z))], [_outlined(0.05, mode)])
        row = _ring(img)[90]
        thick.append(row[160:].sum())
    if mode == "screenCoordinates":
        assert abs(thick[0] - thick[1]) <= 1 and abs(thick[0] - 4.5) <= 1.0, thick
    else:
        assert thick[0] >= thick[1] + 2, thick


@pytest.mark.parametrize("mix", [0.0, 1.0])
def test_outline_lighting_mix(make_renderer, mix):
    """Mix 0 (a VRM 0.x outline with colour mode 0): the outline colour whatever the light;
    mix 1: the outline colour times the surface shading."""
    imgs = [draw(make_renderer(SIZE, background="#000000", lighting=light((0, 0, 1), c, 0.0)),
                 [syn.sphere()], [_outlined(mix=mix)]) for c in (1.0, 0.2)]
    plain = draw(make_renderer(SIZE, background="#000000"), [syn.sphere()],
                 [mtoon(base=(1, 1, 1, 1), shade_color=np.ones(3))])
    outline = np.all(plain[..., :3] == 0, axis=-1) & np.any(imgs[0][..., :3] > 0, axis=-1)
    assert outline.sum() > 100
    a, b = imgs[0][outline][:, :3].astype(int), imgs[1][outline][:, :3].astype(int)
    if mix == 0.0:
        assert np.all(a == (255, 0, 0)) and np.all(b == (255, 0, 0))
    else:
        assert np.all(a[:, 1:] == 0) and np.median(b[:, 0]) < np.median(a[:, 0]) - 60


def test_vrm0_outline_colour_mode_fixed_is_not_tinted_by_light(make_renderer, godette_path):
    """Godette's Face and Body with _OutlineColorMode 0: the outline pixels are the outline
    colour under a bright and a dim light (with mode 1 they change)."""
    from avatars import load_avatar
    from tests.avatars.glb import join, split

    doc, b = split(godette_path.read_bytes())
    for p in doc["extensions"]["VRM"]["materialProperties"][:2]:
        p["floatProperties"]["_OutlineColorMode"] = 0
        p["vectorProperties"]["_OutlineColor"] = [1.0, 0.0, 1.0, 1.0]
        p["floatProperties"]["_OutlineWidth"] = 1.0
    fixed = load_avatar("fixed.vrm", data=join(doc, b))
    for p in doc["extensions"]["VRM"]["materialProperties"][:2]:
        p["floatProperties"]["_OutlineColorMode"] = 1
        p["floatProperties"]["_OutlineLightingMix"] = 1.0
    mixed = load_avatar("mixed.vrm", data=join(doc, b))
    out = {}
    for name, av in (("fixed", fixed), ("mixed", mixed)):
        for c in (1.0, 0.3):
            r = make_renderer(SIZE, background="#000000", lighting=light((0.3, 0.6, 1.0), c, 0.0))
            r.set_avatar(av)
            r.draw()
            out[name, c] = r.read_rgba()[..., :3].astype(int)
    magenta = np.all(out["fixed", 1.0] == (255, 0, 255), axis=-1)
    assert magenta.sum() > 200
    assert np.all(out["fixed", 0.3][magenta] == (255, 0, 255))
    assert np.median(out["mixed", 0.3][magenta][:, 0]) < 0.7 * np.median(out["mixed", 1.0][magenta][:, 0])


# ---------------------------------------------------------------------------- UV animation

def _uv_quad_material(**kw):
    return mtoon(base=(1, 1, 1, 1), shade_color=np.ones(3), base_color_texture=TextureRef(0),
                 shade_texture=TextureRef(0), **kw)


REPEAT = Sampler(mag_filter=9728, min_filter=9728, wrap_s=10497, wrap_t=10497)


@pytest.mark.parametrize("anim,t", [({"uv_animation_scroll_x_speed": 1.0}, 0.5),
                                    ({"uv_animation_scroll_x_speed": -0.25}, 2.0),
                                    ({"uv_animation_rotation_speed": math.pi}, 1.0)])
def test_uv_animation_swaps_the_halves(make_renderer, anim, t):
    """Scroll by half a texture, or rotate by π about (0.5, 0.5): the halves change places."""
    images, textures = syn.textures(syn.halves((255, 0, 0, 255), (0, 0, 255, 255)), sampler=REPEAT)
    r = make_renderer(SIZE, lighting=light((0, 0, 1)))
    mats = [_uv_quad_material(**anim)]
    at0 = draw(r, [syn.quad()], mats, images=images, textures=textures, time_s=0.0)
    now = draw(r, [syn.quad()], mats, images=images, textures=textures, time_s=t)
    assert tuple(px(at0, LEFT)) == (255, 0, 0) and tuple(px(at0, RIGHT)) == (0, 0, 255)
    assert tuple(px(now, LEFT)) == (0, 0, 255) and tuple(px(now, RIGHT)) == (255, 0, 0)


@pytest.mark.parametrize("speed,t", [(1.0, 0.5), (-0.25, 2.0)])
def test_uv_animation_scroll_y_swaps_top_and_bottom(make_renderer, speed, t):
    """Scroll Y by half a texture: the top and bottom halves change places (left/right stay)."""
    top_bottom = np.transpose(syn.halves((255, 0, 0, 255), (0, 0, 255, 255)), (1, 0, 2)).copy()
    images, textures = syn.textures(top_bottom, sampler=REPEAT)
    r = make_renderer(SIZE, lighting=light((0, 0, 1)))
    mats = [_uv_quad_material(uv_animation_scroll_y_speed=speed)]
    at0 = draw(r, [syn.quad()], mats, images=images, textures=textures, time_s=0.0)
    now = draw(r, [syn.quad()], mats, images=images, textures=textures, time_s=t)
    top, bottom = (75, 160), (105, 160)
    assert {tuple(px(at0, top)), tuple(px(at0, bottom))} == {(255, 0, 0), (0, 0, 255)}
    assert tuple(px(now, top)) == tuple(px(at0, bottom)) and tuple(px(now, bottom)) == tuple(px(at0, top))


def test_uv_animation_mask_stops_the_motion_where_its_blue_is_zero(make_renderer):
    images, textures = syn.textures(syn.halves((255, 0, 0, 255), (0, 0, 255, 255)),
                                    syn.halves((0, 0, 255, 255), (0, 0, 0, 255)), sampler=REPEAT)
    r = make_renderer(SIZE, lighting=light((0, 0, 1)))
    mats = [_uv_quad_material(uv_animation_scroll_x_speed=1.0, uv_animation_mask_texture=TextureRef(1))]
    img = draw(r, [syn.quad()], mats, images=images, textures=textures, time_s=0.5)
    # left half (mask 1) moved by 0.5 and shows blue; right half (mask 0) kept its blue
    assert tuple(px(img, LEFT)) == (0, 0, 255) and tuple(px(img, RIGHT)) == (0, 0, 255)
    still = draw(r, [syn.quad()], [_uv_quad_material(uv_animation_scroll_x_speed=1.0,
                                                     uv_animation_mask_texture=TextureRef(1))],
                 images=images, textures=textures, time_s=0.0)
    assert tuple(px(still, LEFT)) == (255, 0, 0)


def test_uv_animation_is_a_function_of_the_time_only(make_renderer):
    """The same time gives the same pixels whatever was drawn before (replays are exact), and
    a whole period later is the same image (offsets are reduced, float32 keeps its precision)."""
    images, textures = syn.textures(syn.halves((255, 0, 0, 255), (0, 0, 255, 255), size=16), sampler=REPEAT)
    r = make_renderer(SIZE, lighting=light((0, 0, 1)))
    mats = [_uv_quad_material(uv_animation_scroll_x_speed=0.3, uv_animation_rotation_speed=0.7)]
    a = draw(r, [syn.quad()], mats, images=images, textures=textures, time_s=1.7)
    r.draw(camera=syn.CAMERA, time_s=5.0)
    r.draw(camera=syn.CAMERA, time_s=1.7)
    b = r.read_rgba()
    assert np.array_equal(a, b)
    from render.materials import uv_animation

    x, y, rot = uv_animation(mats[0], 1e6)
    assert abs(x) <= 2.0 and abs(rot) <= 2 * math.pi


# ---------------------------------------------------------------------------- render order

def _blend(color, *, z_write=False, offset=0):
    return Material(base_color_factor=np.asarray(color, float), alpha_mode="BLEND", unlit=False,
                    mtoon=MToon(shade_color=np.asarray(color[:3], float), transparent_with_z_write=z_write,
                                render_queue_offset=offset))


def test_transparent_with_z_write_is_drawn_before_plain_transparent(make_renderer):
    """MToon's queue: BLEND with z-write (2501) before BLEND without (3000), whatever the depth:
    the near z-writing quad hides the far one drawn after it."""
    r = make_renderer(SIZE, background="#000000", lighting=light((0, 0, 1)))
    near_zw = _blend((0.0, 0.0, 1.0, 0.5), z_write=True)
    far = _blend((1.0, 0.0, 0.0, 0.5))
    img = draw(r, [syn.quad((0, 0, 0.3), material=0), syn.quad((0, 0, 0.0), material=1)], [near_zw, far])
    c = px(img, CENTER)
    assert c[0] == 0 and near(c[2], 0.5), c


def test_render_queue_offset_orders_transparent_materials(make_renderer):
    """Offsets win over depth: the near quad (offset -1) first, the far one (offset 0) over it."""
    r = make_renderer(SIZE, background="#000000", lighting=light((0, 0, 1)))
    near_q = _blend((0.0, 0.0, 1.0, 0.5), offset=-1)
    far = _blend((1.0, 0.0, 0.0, 0.5), offset=0)
    img = draw(r, [syn.quad((0, 0, 0.3), material=0), syn.quad((0, 0, 0.0), material=1)], [near_q, far])
    c = px(img, CENTER)
    assert near(c[0], 0.5) and near(c[2], 0.25), c


# ---------------------------------------------------------------------------- glTF PBR

def _pbr(color=(1, 1, 1, 1), **kw):
    return Material(base_color_factor=np.asarray(color, float), metallic_factor=kw.pop("metallic", 0.0),
                    roughness_factor=kw.pop("roughness", 1.0), **kw)


def test_pbr_dielectric_and_metal_at_normal_incidence(make_renderer):
    """glTF BRDF, light, view and normal aligned, roughness 1 (D = 1/π, V = 1/4): dielectric
    π (0.96/π + 0.04/(4π)) = 0.97; metal (base 1) π (1/(4π)) = 0.25. The metallic-roughness
    texture's blue is the metal (left half)."""
    images, textures = syn.textures(syn.halves((0, 255, 255, 255), (0, 255, 0, 255)))
    r = make_renderer(SIZE, lighting=light((0, 0, 1)))
    mat = _pbr(metallic=1.0, metallic_roughness_texture=TextureRef(0))
    img = draw(r, [syn.quad()], [mat], images=images, textures=textures)
    assert all(near(c, 0.25) for c in px(img, LEFT)) and all(near(c, 0.97) for c in px(img, RIGHT)), (
        px(img, LEFT), px(img, RIGHT))


def test_pbr_lambert_falloff_and_occluded_ambient(make_renderer):
    r = make_renderer(SIZE, lighting=light((1, 0, 1), 1.0, 0.0))
    c = px(draw(r, [syn.quad()], [_pbr(roughness=1.0)]), CENTER)
    assert abs(int(c[0]) - syn.srgb8(0.97 * math.cos(math.pi / 4))) <= 8, c   # N.L = cos 45°
    images, textures = syn.textures(syn.halves((0, 0, 0, 255), (255, 0, 0, 255)))
    amb = make_renderer(SIZE, lighting=light((0, 0, 1), 0.0, 0.5))
    img = draw(amb, [syn.quad()], [_pbr(occlusion_texture=TextureRef(0))], images=images, textures=textures)
    assert px(img, LEFT)[0] == 0 and near(px(img, RIGHT)[0], 0.5)


# ---------------------------------------------------------------------------- samplers

@pytest.mark.parametrize("force", [False, True])
def test_nearest_stays_nearest(make_renderer, force):
    """A 64 px checkerboard minified on a small quad: NEAREST keeps pure texels (no mipmaps,
    even when LINEAR filters are upgraded); LINEAR upgraded to mipmaps averages to grey."""
    board = np.zeros((64, 64, 4), np.uint8)
    board[..., 3] = 255
    board[(np.add.outer(np.arange(64), np.arange(64)) % 2) == 0, :3] = 255
    for sampler, pure in ((Sampler(mag_filter=9728, min_filter=9728), True),
                          (Sampler(mag_filter=9729, min_filter=9729), None)):
        images, textures = syn.textures(board, sampler=sampler)
        r = make_renderer(SIZE, force_mipmaps=force)
        img = draw(r, [syn.quad(size=0.2)], [syn.unlit(base_color_texture=TextureRef(0))], images=images,
                   textures=textures)
        inner = img[84:97, 154:167, 0].astype(int)
        mixed = np.mean((inner > 10) & (inner < 245))
        if pure:
            assert mixed == 0.0 and not r.gpu.texture(0)[0].mipmapped
        elif force:
            assert mixed > 0.9 and r.gpu.texture(0)[0].mipmapped


# ---------------------------------------------------------------------------- anti-aliasing

def _edge_levels(img) -> int:
    """Pixels strictly between black and white along a slanted edge."""
    v = img[..., 0].astype(int)
    return int(((v > 20) & (v < 235)).sum())


def test_antialias_modes(make_renderer):
    tri = syn.quad()
    tri.positions[:, 0] += tri.positions[:, 1] * 0.4   # slanted sides
    counts = {}
    for mode in ("off", "fxaa", "msaa"):
        r = make_renderer(SIZE, background="#000000", antialias=mode)
        assert r.antialias == mode and (r.samples > 0) == (mode == "msaa")
        counts[mode] = _edge_levels(draw(r, [tri], [syn.unlit()]))
    assert counts["off"] == 0 and counts["fxaa"] > 40 and counts["msaa"] > 40, counts
    auto = make_renderer(SIZE)
    from render.antialias import SOFTWARE_AUTO, is_software
    from render._gl import GL

    software = is_software((GL.glGetString(GL.GL_RENDERER) or b"").decode())
    assert auto.antialias == (SOFTWARE_AUTO if software else "msaa")
    assert make_renderer(SIZE, samples=4).antialias == "msaa" and make_renderer(SIZE, samples=0).antialias == "off"
    with pytest.raises(ValueError, match="antialias"):
        make_renderer(SIZE, antialias="smaa")
