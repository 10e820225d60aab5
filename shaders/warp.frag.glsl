#version 330 core
// Flat colour for the warped grid lines and the density point cloud (alpha blended or added).
uniform vec4 u_color;
out vec4 frag_color;

void main() { frag_color = u_color; }
