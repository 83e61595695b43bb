// Per-vertex contact after skinning (avatars/contact.py; the try-on hair): the skinned world
// position is pushed out of a head envelope and of sphere/capsule colliders. Inputs come from
// the drawn pose only (render/contact.py), so the look never depends on frame rate.
uniform int u_contact;              // 1: this draw has contact
uniform int u_contact_env;          // 1: with the head envelope
uniform sampler2D u_contact_env_tex; // R: envelope radius at (azimuth cell, elevation cell)
uniform mat4 u_contact_to_env;      // world -> envelope frame
uniform mat4 u_contact_from_env;    // envelope frame -> world
uniform int u_contact_count;        // colliders
uniform vec4 u_contact_a[CONTACT_MAX];  // axis start (xyz), radius (w)
uniform vec4 u_contact_b[CONTACT_MAX];  // axis end (xyz)

float contact_push(float d, float r) {   // avatars.contact.push_depth
    return max(0.0, min(d, (r - d) * (CONTACT_FULL / (1.0 - CONTACT_FULL))));
}

float contact_env_radius(vec3 q) {       // avatars.contact.envelope_radius
    ivec2 size = textureSize(u_contact_env_tex, 0);
    int na = size.x, ne = size.y;
    const float PI = 3.14159265358979;
    float az = atan(q.x, q.z);
    float el = atan(q.y, length(q.xz));
    float fa = (az + PI) / (2.0 * PI) * float(na) - 0.5;
    float fe = clamp((el + 0.5 * PI) / PI * float(ne) - 0.5, 0.0, float(ne - 1));
    int a0 = int(floor(fa));
    int e0 = min(int(floor(fe)), ne - 2);
    float ta = fa - float(a0), te = fe - float(e0);
    a0 = (a0 + na) % na;
    int a1 = (a0 + 1) % na;
    int e1 = e0 + 1;
    float g00 = texelFetch(u_contact_env_tex, ivec2(a0, e0), 0).r, g01 = texelFetch(u_contact_env_tex, ivec2(a1, e0), 0).r;
    float g10 = texelFetch(u_contact_env_tex, ivec2(a0, e1), 0).r, g11 = texelFetch(u_contact_env_tex, ivec2(a1, e1), 0).r;
    return (1.0 - te) * ((1.0 - ta) * g00 + ta * g01) + te * ((1.0 - ta) * g10 + ta * g11);
}

vec3 contact_apply(vec3 p) {             // avatars.contact.apply_contact
    if (u_contact_env == 1) {
        vec3 q = (u_contact_to_env * vec4(p, 1.0)).xyz;
        float r = length(q);
        if (r > 1e-9) {
            float big = contact_env_radius(q);
            float s = contact_push(big - r, big);
            if (s > 0.0) p = (u_contact_from_env * vec4(q * ((r + s) / r), 1.0)).xyz;
        }
    }
    for (int rnd = 0; rnd < CONTACT_ROUNDS; ++rnd) {
        for (int k = 0; k < u_contact_count; ++k) {
            vec3 a = u_contact_a[k].xyz, e = u_contact_b[k].xyz - a;
            float rad = u_contact_a[k].w;
            float ee = dot(e, e);
            float t = ee < 1e-30 ? 0.0 : clamp(dot(p - a, e) / ee, 0.0, 1.0);
            vec3 off = p - (a + t * e);
            float d = length(off);
            float s = contact_push(rad - d, rad);
            if (s > 0.0 && d > 1e-9) p += off * (s / d);
        }
    }
    return p;
}
