// Skinned, morphed mesh vertex shader (with OUTLINE: the MToon inverted hull, extruded along
// normals as three-vrm 3.5.5's mtoon.vert does: world mode in metres; screen mode
// (OUTLINE_SCREEN) scaled by the view depth over the projection's y scale, so the width is a
// fraction of the viewport height times how much the normal lies in the view plane).
layout(location = 0) in vec3 a_position;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec2 a_uv0;
layout(location = 3) in vec2 a_uv1;
layout(location = 4) in vec4 a_color;
layout(location = 5) in uvec4 a_joints;
layout(location = 6) in vec4 a_weights;

uniform sampler2D u_morph_tex;   // RGBA32F, delta k at (k % MORPH_WIDTH, k / MORPH_WIDTH)
uniform int u_joint_base;        // first matrix of this draw (skin joints, or the rigid node matrix)
uniform int u_skinned;
uniform int u_morph_count;       // active targets this draw
uniform int u_morph_vertices;    // V of this primitive
uniform int u_morph_normal_base; // index of the first normal delta (T * V), or -1 without normals
uniform int u_morph_index[MAX_MORPHS];
uniform float u_morph_weight[MAX_MORPHS];
#if defined(OUTLINE) && defined(HAS_OUTLINE_WIDTH_TEX)
uniform sampler2D u_outline_width_tex;  // G channel multiplies the width (linear)
#endif

out vec3 v_world;
out vec3 v_normal;
out vec2 v_uv0;
out vec2 v_uv1;
out vec4 v_color;

// Skinning matrices are affine: each is stored as its top three rows (3 x vec4).
#ifdef JOINTS_TEXTURE
uniform sampler2D u_joint_tex;   // RGBA32F, row r of matrix k at texel ((k % 64) * 3 + r, k / 64)
vec4 joint_row(int k, int r) {
    return texelFetch(u_joint_tex, ivec2((k % 64) * 3 + r, k / 64), 0);
}
#else
layout(std140) uniform Joints {  // faster than texture fetches on llvmpipe; used when the avatar fits
    vec4 u_joint_rows[3 * JOINT_CAPACITY];
};
vec4 joint_row(int k, int r) {
    return u_joint_rows[3 * k + r];
}
#endif

mat4 rows_to_matrix(vec4 r0, vec4 r1, vec4 r2) {
    return mat4(r0.x, r1.x, r2.x, 0.0, r0.y, r1.y, r2.y, 0.0, r0.z, r1.z, r2.z, 0.0, r0.w, r1.w, r2.w, 1.0);
}

mat4 joint_matrix(int j) {
    int k = u_joint_base + j;
    return rows_to_matrix(joint_row(k, 0), joint_row(k, 1), joint_row(k, 2));
}

mat4 skin_matrix(uvec4 j, vec4 w) {
    ivec4 k = ivec4(j) + u_joint_base;
    vec4 r0 = w.x * joint_row(k.x, 0) + w.y * joint_row(k.y, 0) + w.z * joint_row(k.z, 0) + w.w * joint_row(k.w, 0);
    vec4 r1 = w.x * joint_row(k.x, 1) + w.y * joint_row(k.y, 1) + w.z * joint_row(k.z, 1) + w.w * joint_row(k.w, 1);
    vec4 r2 = w.x * joint_row(k.x, 2) + w.y * joint_row(k.y, 2) + w.z * joint_row(k.z, 2) + w.w * joint_row(k.w, 2);
    return rows_to_matrix(r0, r1, r2);
}

vec3 morph_delta(int k) {
    return texelFetch(u_morph_tex, ivec2(k % MORPH_WIDTH, k / MORPH_WIDTH), 0).xyz;
}

void main() {
    pass_fragment_values();  // render/fragment_values.py: what mesh.frag reads from the blocks
    vec3 pos = a_position;
    vec3 nrm = a_normal;
    for (int i = 0; i < u_morph_count; ++i) {
        int k = u_morph_index[i] * u_morph_vertices + gl_VertexID;
        pos += u_morph_weight[i] * morph_delta(k);
        if (u_morph_normal_base >= 0) nrm += u_morph_weight[i] * morph_delta(u_morph_normal_base + k);
    }
    mat4 m;
    mat3 nm;
    if (u_skinned == 1) {
        float wsum = a_weights.x + a_weights.y + a_weights.z + a_weights.w;
        if (wsum > 1e-6) {
            m = skin_matrix(a_joints, a_weights);
        } else {
            m = joint_matrix(int(a_joints.x));
        }
        nm = mat3(m);
    } else {
        m = joint_matrix(0);
        nm = transpose(inverse(mat3(m)));
    }
    vec4 world = m * vec4(pos, 1.0);
    if (u_contact == 1) world.xyz = contact_apply(world.xyz);  // contact.glsl (try-on hair)
    vec3 n = nm * nrm;
    float len = length(n);
    n = len > 1e-12 ? n / len : vec3(0.0, 0.0, 1.0);
#ifdef OUTLINE
    float width = m_params1.y;
#ifdef HAS_OUTLINE_WIDTH_TEX
    width *= textureLod(u_outline_width_tex, slot_uv(TEX_OUTLINE_WIDTH, a_uv0, a_uv1), 0.0).g;
#endif
    vec4 view_pos = u_view * world;
#ifdef OUTLINE_SCREEN
    width *= -view_pos.z / abs(u_proj[1][1]);
#endif
    view_pos.xyz += mat3(u_view) * n * width;
    gl_Position = u_proj * view_pos;
    gl_Position.z += 1e-6 * gl_Position.w;  // as three-vrm: keeps the hull behind coincident surfaces
#else
    gl_Position = u_proj * (u_view * world);
#endif
    v_world = world.xyz;
    v_normal = n;
    v_uv0 = a_uv0;
    v_uv1 = a_uv1;
    v_color = a_color;
}
