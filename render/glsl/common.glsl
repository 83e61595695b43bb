// Shared uniform blocks (std140). Layouts mirror render/materials.py and render/renderer.py.
layout(std140) uniform Frame {
    mat4 u_view;
    mat4 u_proj;
    vec4 u_camera_pos;   // xyz world metres
    vec4 u_light_dir;    // xyz unit vector toward the light, world
    vec4 u_light_color;  // rgb linear (intensity folded in)
    vec4 u_ambient;      // rgb linear
    vec4 u_viewport;     // width px, height px, aspect, 0
};

layout(std140) uniform Material {
    vec4 m_base_color;     // linear rgba
    vec4 m_shade_color;    // rgb linear
    vec4 m_rim_color;      // rgb linear, w = fresnel power
    vec4 m_emissive;       // rgb linear
    vec4 m_outline_color;  // rgb linear, w = outline lighting mix
    vec4 m_params0;        // shading shift, shading toony, rim lift, rim lighting mix
    vec4 m_params1;        // alpha cutoff, outline width, gi equalization, 0
    ivec4 m_flags;         // alpha mode (0 opaque, 1 mask, 2 blend), lighting (0 unlit, 1 lambert, 2 mtoon), outline mode (0 none, 1 world, 2 screen), base texcoord set
    ivec4 m_textures;      // has base, has shade, has emissive, double sided
    mat3 m_uv;             // KHR_texture_transform of the base colour texture
};
