// Fast approximate anti-aliasing (the FXAA algorithm of T. Lottes, NVIDIA 2009-2011, in its
// compact "console" form: luma of the four diagonal neighbours, a blur direction along the
// edge from their gradient, two or four taps along it, the four-tap result kept unless it
// leaves the local luma range). 9 texture reads per pixel, no loops (software rasterisers
// run every iteration of a loop for every pixel).
// Input: the scene's sRGB texture read without decoding (EXT_texture_sRGB_decode), so taps
// are plain 8-bit reads and the edge blend happens on sRGB-encoded values, as FXAA is
// designed for; the output is written as is (GL_FRAMEBUFFER_SRGB off). Colours are
// premultiplied; luma is taken over a grey backdrop so silhouettes over a transparent
// background are found too.
uniform sampler2D u_tex;
uniform vec2 u_texel;      // 1 / texture size
out vec4 o_color;

const float EDGE_THRESHOLD = 1.0 / 8.0;   // relative local contrast below which nothing is done
const float EDGE_THRESHOLD_MIN = 1.0 / 24.0;
const float REDUCE_MUL = 1.0 / 8.0;
const float REDUCE_MIN = 1.0 / 128.0;
const float SPAN_MAX = 8.0;

float luma(vec4 c) {
    return dot(c.rgb + (1.0 - c.a) * 0.5, vec3(0.299, 0.587, 0.114));
}

void main() {
    vec2 p = gl_FragCoord.xy * u_texel;
    vec4 cm = texture(u_tex, p);
    float l_nw = luma(texture(u_tex, p + vec2(-u_texel.x, -u_texel.y)));
    float l_ne = luma(texture(u_tex, p + vec2(u_texel.x, -u_texel.y)));
    float l_sw = luma(texture(u_tex, p + vec2(-u_texel.x, u_texel.y)));
    float l_se = luma(texture(u_tex, p + vec2(u_texel.x, u_texel.y)));
    float l_m = luma(cm);
    float l_min = min(l_m, min(min(l_nw, l_ne), min(l_sw, l_se)));
    float l_max = max(l_m, max(max(l_nw, l_ne), max(l_sw, l_se)));
    vec2 dir = vec2(-((l_nw + l_ne) - (l_sw + l_se)), (l_nw + l_sw) - (l_ne + l_se));
    float reduce = max((l_nw + l_ne + l_sw + l_se) * (0.25 * REDUCE_MUL), REDUCE_MIN);
    float rcp_min = 1.0 / (min(abs(dir.x), abs(dir.y)) + reduce);
    dir = clamp(dir * rcp_min, -SPAN_MAX, SPAN_MAX) * u_texel;
    vec4 a = 0.5 * (texture(u_tex, p + dir * (1.0 / 3.0 - 0.5)) + texture(u_tex, p + dir * (2.0 / 3.0 - 0.5)));
    vec4 b = a * 0.5 + 0.25 * (texture(u_tex, p - dir * 0.5) + texture(u_tex, p + dir * 0.5));
    float l_b = luma(b);
    vec4 aa = (l_b < l_min || l_b > l_max) ? a : b;
    o_color = (l_max - l_min < max(EDGE_THRESHOLD_MIN, l_max * EDGE_THRESHOLD)) ? cm : aa;
}
