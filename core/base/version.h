// The program's version line, torch-free.
#pragma once
namespace attn {
const char* version_string();  // "attnlab 0.1.0 (LibTorch x.y.z)"
}
