// A triangle covering the viewport (post-processing passes read pixels with gl_FragCoord).
void main() {
    vec2 c = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);
    gl_Position = vec4(c * 2.0 - 1.0, 0.0, 1.0);
}
