// A textured rectangle in output-image pixels (top-left origin; output rows are top-down,
// so image row y is framebuffer row y).
uniform vec4 u_rect;     // x, y, width, height in pixels
uniform vec2 u_target;   // output size in pixels
out vec2 v_uv;
void main() {
    vec2 c = vec2(gl_VertexID & 1, (gl_VertexID >> 1) & 1);
    vec2 px = u_rect.xy + c * u_rect.zw;
    v_uv = c;
    gl_Position = vec4(px / u_target * 2.0 - 1.0, 0.0, 1.0);
}
