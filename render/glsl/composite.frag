// Scene (premultiplied linear, GL bottom-up) -> output RGBA8 sRGB, rows top-down, over the background.
uniform sampler2D u_scene;
uniform int u_background;   // 0 transparent (straight alpha out), 1 solid colour
uniform vec3 u_background_color;  // linear
out vec4 o_color;

vec3 srgb_encode(vec3 c) {
    c = clamp(c, 0.0, 1.0);
    return mix(c * 12.92, 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055, step(0.0031308, c));
}

void main() {
    ivec2 size = textureSize(u_scene, 0);
    ivec2 p = ivec2(gl_FragCoord.xy);
    vec4 s = texelFetch(u_scene, ivec2(p.x, size.y - 1 - p.y), 0);
    if (u_background == 1) {
        o_color = vec4(srgb_encode(s.rgb + u_background_color * (1.0 - s.a)), 1.0);
    } else {
        float a = clamp(s.a, 0.0, 1.0);
        o_color = vec4(a > 1e-6 ? srgb_encode(s.rgb / a) : vec3(0.0), a);
    }
}
