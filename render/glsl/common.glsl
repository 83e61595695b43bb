// Shared uniform blocks (std140). Layouts mirror render/materials.py and render/renderer.py.
layout(std140) uniform Frame {
    mat4 u_view;
    mat4 u_proj;
    vec4 u_camera_pos;   // xyz world metres
    vec4 u_light_dir;    // xyz unit vector toward the light, world
    vec4 u_light_color;  // rgb linear (intensity folded in; render/lighting.py)
    vec4 u_ambient;      // rgb linear
    vec4 u_viewport;     // width px, height px, aspect, 0
};

// Texture slots (render/materials.py TEXTURE_SLOTS): index of the transform rows and of the
// texture coordinate bit.
#define TEX_BASE 0
#define TEX_SHADE 1
#define TEX_EMISSIVE 2
#define TEX_NORMAL 3
#define TEX_SHADING_SHIFT 4
#define TEX_MATCAP 5
#define TEX_RIM 6
#define TEX_OUTLINE_WIDTH 7
#define TEX_UV_MASK 8
#define TEX_METALLIC_ROUGHNESS 9
#define TEX_OCCLUSION 10
#define TEX_SLOTS 11

layout(std140) uniform Material {
    vec4 m_base_color;     // linear rgba
    vec4 m_shade_color;    // rgb linear, w = shading shift texture scale
    vec4 m_rim_color;      // rgb linear, w = rim fresnel power
    vec4 m_emissive;       // rgb linear, w = normal texture scale
    vec4 m_outline_color;  // rgb linear, w = outline lighting mix
    vec4 m_matcap_color;   // rgb linear, w = occlusion strength
    vec4 m_params0;        // shading shift, shading toony, rim lift, rim lighting mix
    vec4 m_params1;        // alpha cutoff, outline width, metallic, roughness
    vec4 m_uv_anim;        // UV animation now: scroll x, scroll y, rotation phase (radians), 0
    ivec4 m_flags;         // alpha mode (0 opaque, 1 mask, 2 blend), double sided, texcoord-1 bits per slot, 0
    vec4 m_tex_xform[2 * TEX_SLOTS];  // per slot: rows (a, b, c), (d, e, f) of its uv transform
};

// uv of texture slot k: the slot's texture coordinate set through its transform
// (KHR_texture_transform, VRM 0.x _MainTex tiling, expression texture transform binds).
vec2 slot_transform(int k, vec2 uv) {
    vec3 h = vec3(uv, 1.0);
    return vec2(dot(m_tex_xform[2 * k].xyz, h), dot(m_tex_xform[2 * k + 1].xyz, h));
}

vec2 slot_uv(int k, vec2 uv0, vec2 uv1) {
    return slot_transform(k, ((m_flags.z >> k) & 1) == 1 ? uv1 : uv0);
}
