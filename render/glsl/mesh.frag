// glTF base colour + alpha modes, unlit, Lambert, and MToon basics; premultiplied linear output.
// Variants: ALPHA_MASK (alpha test with discard), OUTLINE (MToon outline colour).
in vec3 v_world;
in vec3 v_normal;
in vec2 v_uv0;
in vec2 v_uv1;
in vec4 v_color;

uniform sampler2D u_base_tex;
uniform sampler2D u_shade_tex;
uniform sampler2D u_emissive_tex;

out vec4 o_color;

float linearstep(float a, float b, float t) {
    return clamp((t - a) / max(b - a, 1e-5), 0.0, 1.0);
}

void main() {
    vec2 uv = (m_uv * vec3(m_flags.w == 1 ? v_uv1 : v_uv0, 1.0)).xy;
    vec4 base = m_base_color * v_color;
    if (m_textures.x == 1) base *= texture(u_base_tex, uv);
#ifdef ALPHA_MASK
    if (base.a < m_params1.x) discard;
    base.a = 1.0;
#else
    if (m_flags.x == 0) base.a = 1.0;
#endif
    vec3 n = normalize(v_normal);
#ifndef OUTLINE
    if (m_textures.w == 1 && !gl_FrontFacing) n = -n;
#endif
    vec3 l = normalize(u_light_dir.xyz);
    vec3 v = normalize(u_camera_pos.xyz - v_world);
    vec3 lit = base.rgb;
    vec3 col;
    vec3 lighting = u_light_color.rgb + u_ambient.rgb;
    if (m_flags.y == 0) {
        col = lit;
    } else if (m_flags.y == 1) {
        col = lit * min(u_ambient.rgb + u_light_color.rgb * max(dot(n, l), 0.0), vec3(1.0));
    } else {
        // MToon: shading = linearstep(-1 + toony, 1 - toony, N.L + shift) between shade and lit colours
        // (VRMC_materials_mtoon 1.0); GI adds ambient * lit; as MToon 0.x, never brighter than lit.
        float toony = m_params0.y;
        float shading = linearstep(-1.0 + toony, 1.0 - toony, dot(n, l) + m_params0.x);
        vec3 shade = m_shade_color.rgb;
        if (m_textures.y == 1) shade *= texture(u_shade_tex, uv).rgb;
        vec3 direct = mix(shade, lit, shading) * u_light_color.rgb;
        col = min(direct + u_ambient.rgb * lit, lit);
        lighting = u_light_color.rgb * shading + u_ambient.rgb;
        if (m_rim_color.r + m_rim_color.g + m_rim_color.b > 0.0) {  // uniform branch: skipped without rim
            float fres = clamp(1.0 - dot(n, v) + m_params0.z, 0.0, 1.0);
            vec3 rim = m_rim_color.rgb * pow(fres, max(m_rim_color.w, 1e-4));
            col += rim * mix(vec3(1.0), lighting, m_params0.w);
        }
    }
    vec3 emissive = m_emissive.rgb;
    if (m_textures.z == 1) emissive *= texture(u_emissive_tex, uv).rgb;
    col += emissive;
#ifdef OUTLINE
    col = m_outline_color.rgb * mix(vec3(1.0), col, m_outline_color.w);
#endif
    o_color = vec4(col * base.a, base.a);
}
