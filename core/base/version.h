// The program's version line, torch-free.
#pragma once
namespace attn {
const char* version_string();  // "attnlab 0.1.0 (LibTorch x.y.z)"
// The git commit the binary was configured at (40 hex digits), or "unknown" outside a checkout.
const char* commit_string();
}
