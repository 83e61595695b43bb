// Surface shading, premultiplied linear output. One of:
//   LIGHTING_MTOON  MToon 1.0 (VRMC_materials_mtoon; VRM 0.x MToon migrated to it), as
//                   three-vrm 3.5.5's mtoon.frag computes it for one directional light and
//                   a uniform ambient light (render/lighting.py maps our units to three.js's)
//   LIGHTING_PBR    glTF 2.0 metallic-roughness (the BRDF of the glTF specification,
//                   Appendix B) under the same lights; the ambient light is diffuse only
//   LIGHTING_UNLIT  KHR_materials_unlit: the base colour
// Features (render/materials.py shader_features): HAS_<SLOT>_TEX per texture, MTOON_RIM
// (parametric rim and matcap), UV_ANIMATION; ALPHA_MASK (alpha test with discard);
// OUTLINE (the MToon outline's colour).
#if !defined(LIGHTING_MTOON) && !defined(LIGHTING_PBR) && !defined(LIGHTING_UNLIT)
#define LIGHTING_UNLIT
#endif
in vec3 v_world;
in vec3 v_normal;
in vec2 v_uv0;
in vec2 v_uv1;
in vec4 v_color;

uniform sampler2D u_base_tex;
uniform sampler2D u_shade_tex;
uniform sampler2D u_emissive_tex;
uniform sampler2D u_normal_tex;
uniform sampler2D u_shading_shift_tex;
uniform sampler2D u_matcap_tex;
uniform sampler2D u_rim_tex;
uniform sampler2D u_uv_mask_tex;
uniform sampler2D u_metallic_roughness_tex;
uniform sampler2D u_occlusion_tex;

out vec4 o_color;

const float PI = 3.141592653589793;

float linearstep(float a, float b, float t) {
    return clamp((t - a) / (b - a), 0.0, 1.0);
}

#ifdef HAS_NORMAL_TEX
// Tangent frame from screen-space derivatives (no tangent attribute), as three.js's
// getTangentFrame (Schüler, "Normal Mapping Without Precomputed Tangents"). Our projection
// is flipped vertically (rows top-down), so the y derivatives change sign.
mat3 tangent_frame(vec3 p, vec3 n, vec2 uv) {
    vec3 q0 = dFdx(p);
    vec3 q1 = -dFdy(p);
    vec2 st0 = dFdx(uv);
    vec2 st1 = -dFdy(uv);
    vec3 q1perp = cross(q1, n);
    vec3 q0perp = cross(n, q0);
    vec3 t = q1perp * st0.x + q0perp * st1.x;
    vec3 b = q1perp * st0.y + q0perp * st1.y;
    float det = max(dot(t, t), dot(b, b));
    float scale = det == 0.0 ? 0.0 : inversesqrt(det);
    return mat3(t * scale, b * scale, n);
}
#endif

void main() {
    vec2 uv0 = v_uv0;
    vec2 uv1 = v_uv1;
#ifdef UV_ANIMATION
    // VRMC_materials_mtoon 1.0 "UV Animation": rotate about (0.5, 0.5), then scroll, both
    // scaled by the mask's B channel; before every texture transform (matcap excepted).
    float anim_mask = 1.0;
#ifdef HAS_UV_MASK_TEX
    anim_mask = texture(u_uv_mask_tex, slot_uv(TEX_UV_MASK, v_uv0, v_uv1)).b;
#endif
    float rc = cos(m_uv_anim.z * anim_mask);
    float rs = sin(m_uv_anim.z * anim_mask);
    mat2 rot = mat2(rc, -rs, rs, rc);
    uv0 = rot * (uv0 - 0.5) + 0.5 + m_uv_anim.xy * anim_mask;
    uv1 = rot * (uv1 - 0.5) + 0.5 + m_uv_anim.xy * anim_mask;
#endif

    vec4 base = m_base_color;
#ifndef LIGHTING_MTOON
    base *= v_color;  // MToon ignores vertex colours
#endif
#ifdef HAS_BASE_TEX
    base *= texture(u_base_tex, slot_uv(TEX_BASE, uv0, uv1));
#endif
#ifdef ALPHA_MASK
    if (base.a < m_params1.x) discard;
    base.a = 1.0;
#else
    if (m_flags.x == 0) base.a = 1.0;
#endif

    vec3 col;
#ifdef LIGHTING_UNLIT
    col = base.rgb;
#else
    vec3 n = normalize(v_normal);
    float face = 1.0;
#ifndef OUTLINE
    if (m_flags.y == 1 && !gl_FrontFacing) face = -1.0;
#endif
    n *= face;
#ifdef HAS_NORMAL_TEX
    vec2 nuv = slot_uv(TEX_NORMAL, uv0, uv1);
    mat3 tbn = tangent_frame(v_world, n, nuv);
    tbn[0] *= face;
    tbn[1] *= face;
    vec3 map_n = texture(u_normal_tex, nuv).xyz * 2.0 - 1.0;
    // the frame's b follows +v (down the image); glTF's +Y is up the image, so y flips (as
    // three.js's GLTFLoader does with normalScale.y for derivative tangents)
    map_n.xy *= vec2(m_emissive.w, -m_emissive.w);
    n = normalize(tbn * map_n);
#endif
    vec3 l = normalize(u_light_dir.xyz);
    vec3 v = normalize(u_camera_pos.xyz - v_world);

#ifdef LIGHTING_MTOON
    // lit / shade composition: shading = linearstep(-1 + toony, 1 - toony, N.L + shift)
    float shift = m_params0.x;
#ifdef HAS_SHADING_SHIFT_TEX
    shift += texture(u_shading_shift_tex, slot_uv(TEX_SHADING_SHIFT, uv0, uv1)).r * m_shade_color.w;
#endif
    float toony = m_params0.y;
    float shading = linearstep(-1.0 + toony, 1.0 - toony, clamp(dot(n, l), -1.0, 1.0) + shift);
    vec3 shade = m_shade_color.rgb;
#ifdef HAS_SHADE_TEX
    shade *= texture(u_shade_tex, slot_uv(TEX_SHADE, uv0, uv1)).rgb;
#endif
    col = mix(shade, base.rgb, shading) * u_light_color.rgb;  // direct light
    col += u_ambient.rgb * base.rgb;                           // global illumination: ambient x lit colour
#ifdef MTOON_RIM
    // parametric rim + matcap, masked, mixed with the light that reaches the surface
    vec3 rim = m_rim_color.rgb * pow(clamp(1.0 - dot(v, n) + m_params0.z, 0.0, 1.0), max(m_rim_color.w, 1e-5));
#ifdef HAS_MATCAP_TEX
    vec3 vv = mat3(u_view) * v;  // view space, as three-vrm
    vec3 nv = mat3(u_view) * n;
    vec3 mx = normalize(vec3(vv.z, 0.0, -vv.x));
    vec3 my = cross(vv, mx);
    vec2 sphere_uv = 0.5 + 0.5 * vec2(dot(mx, nv), -dot(my, nv));
    rim += m_matcap_color.rgb * texture(u_matcap_tex, slot_transform(TEX_MATCAP, sphere_uv)).rgb;
#endif
#ifdef HAS_RIM_TEX
    rim *= texture(u_rim_tex, slot_uv(TEX_RIM, uv0, uv1)).rgb;
#endif
    col += rim * mix(vec3(1.0), u_light_color.rgb + u_ambient.rgb, m_params0.w);
#endif
#endif  // LIGHTING_MTOON

#ifdef LIGHTING_PBR
    float metallic = m_params1.z;
    float roughness = m_params1.w;
#ifdef HAS_METALLIC_ROUGHNESS_TEX
    vec4 mr = texture(u_metallic_roughness_tex, slot_uv(TEX_METALLIC_ROUGHNESS, uv0, uv1));
    roughness *= mr.g;
    metallic *= mr.b;
#endif
    roughness = clamp(roughness, 0.03, 1.0);
    metallic = clamp(metallic, 0.0, 1.0);
    float alpha = roughness * roughness;
    float a2 = alpha * alpha;
    vec3 h = normalize(l + v);
    float ndl = clamp(dot(n, l), 0.0, 1.0);
    float ndv = clamp(abs(dot(n, v)), 1e-4, 1.0);
    float ndh = clamp(dot(n, h), 0.0, 1.0);
    float vdh = clamp(dot(v, h), 0.0, 1.0);
    // glTF 2.0 Appendix B: fresnel_mix(0.04, diffuse, specular) mixed with the conductor by metallic
    float schlick = pow(1.0 - vdh, 5.0);
    vec3 f0 = mix(vec3(0.04), base.rgb, metallic);
    vec3 fresnel = f0 + (1.0 - f0) * schlick;
    float f_dielectric = 0.04 + 0.96 * schlick;
    float dd = ndh * ndh * (a2 - 1.0) + 1.0;
    float d = a2 / (PI * dd * dd);
    float vis = 0.5 / max(ndl * sqrt(ndv * ndv * (1.0 - a2) + a2) + ndv * sqrt(ndl * ndl * (1.0 - a2) + a2), 1e-6);
    vec3 c_diff = base.rgb * (1.0 - metallic);
    vec3 brdf = (1.0 - f_dielectric) * c_diff / PI + fresnel * (d * vis);
    float occlusion = 1.0;
#ifdef HAS_OCCLUSION_TEX
    occlusion = 1.0 + m_matcap_color.w * (texture(u_occlusion_tex, slot_uv(TEX_OCCLUSION, uv0, uv1)).r - 1.0);
#endif
    // our light colour is the irradiance / PI of three.js's (see render/lighting.py)
    col = PI * u_light_color.rgb * ndl * brdf + u_ambient.rgb * c_diff * occlusion;
#endif  // LIGHTING_PBR

#ifdef HAS_EMISSIVE_TEX
    col += m_emissive.rgb * texture(u_emissive_tex, slot_uv(TEX_EMISSIVE, uv0, uv1)).rgb;
#else
    col += m_emissive.rgb;
#endif
#endif  // !LIGHTING_UNLIT

#ifdef OUTLINE
    col = m_outline_color.rgb * mix(vec3(1.0), col, m_outline_color.w);
#endif
    o_color = vec4(col * base.a, base.a);
}
