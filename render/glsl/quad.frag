// Straight-alpha texture (sRGB texture: fetched linear) blended over the output.
uniform sampler2D u_tex;
in vec2 v_uv;
out vec4 o_color;
void main() {
    o_color = texture(u_tex, v_uv);
}
