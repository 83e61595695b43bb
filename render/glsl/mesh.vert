// Skinned, morphed mesh vertex shader (with OUTLINE: the MToon inverted hull, extruded along normals).
layout(location = 0) in vec3 a_position;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec2 a_uv0;
layout(location = 3) in vec2 a_uv1;
layout(location = 4) in vec4 a_color;
layout(location = 5) in uvec4 a_joints;
layout(location = 6) in vec4 a_weights;

uniform sampler2D u_joint_tex;   // RGBA32F, matrix k = 4 texels at ((k % 64) * 4 + column, k / 64)
uniform sampler2D u_morph_tex;   // RGBA32F, delta k at (k % MORPH_WIDTH, k / MORPH_WIDTH)
uniform int u_joint_base;        // first matrix of this draw (skin joints, or the rigid node matrix)
uniform int u_skinned;
uniform int u_morph_count;       // active targets this draw
uniform int u_morph_vertices;    // V of this primitive
uniform int u_morph_normal_base; // index of the first normal delta (T * V), or -1 without normals
uniform int u_morph_index[MAX_MORPHS];
uniform float u_morph_weight[MAX_MORPHS];

out vec3 v_world;
out vec3 v_normal;
out vec2 v_uv0;
out vec2 v_uv1;
out vec4 v_color;

mat4 joint_matrix(int j) {
    int k = u_joint_base + j;
    ivec2 p = ivec2((k % 64) * 4, k / 64);
    return mat4(texelFetch(u_joint_tex, p, 0), texelFetch(u_joint_tex, p + ivec2(1, 0), 0),
                texelFetch(u_joint_tex, p + ivec2(2, 0), 0), texelFetch(u_joint_tex, p + ivec2(3, 0), 0));
}

vec3 morph_delta(int k) {
    return texelFetch(u_morph_tex, ivec2(k % MORPH_WIDTH, k / MORPH_WIDTH), 0).xyz;
}

void main() {
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
            m = a_weights.x * joint_matrix(int(a_joints.x)) + a_weights.y * joint_matrix(int(a_joints.y))
              + a_weights.z * joint_matrix(int(a_joints.z)) + a_weights.w * joint_matrix(int(a_joints.w));
        } else {
            m = joint_matrix(int(a_joints.x));
        }
        nm = mat3(m);
    } else {
        m = joint_matrix(0);
        nm = transpose(inverse(mat3(m)));
    }
    vec4 world = m * vec4(pos, 1.0);
    vec3 n = nm * nrm;
    float len = length(n);
    n = len > 1e-12 ? n / len : vec3(0.0, 0.0, 1.0);
#ifdef OUTLINE
    if (m_flags.z == 1) world.xyz += n * m_params1.y;  // world coordinates: metres along the normal
#endif
    gl_Position = u_proj * (u_view * world);
#ifdef OUTLINE
    if (m_flags.z == 2) {
        // Screen-space width: a fraction of the viewport height (NDC height is 2).
        vec2 cn = (u_proj * (u_view * vec4(n, 0.0))).xy;
        cn.x *= u_viewport.z;
        float l = length(cn);
        if (l > 1e-9) {
            cn /= l;
            cn.x /= u_viewport.z;
            gl_Position.xy += cn * (2.0 * m_params1.y) * gl_Position.w;
        }
    }
#endif
    v_world = world.xyz;
    v_normal = n;
    v_uv0 = a_uv0;
    v_uv1 = a_uv1;
    v_color = a_color;
}
