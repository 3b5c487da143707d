// Emulation.h -- a translation as C++ for the CPU emulator (templates/emu/):
// what `tilet --cpu -o libk.so` compiles with the system's C++ compiler.
//
// The printed .cu and .host.cpp are rewritten, line by line, where g++
// cannot take CUDA or where the emulator models the hardware: the dynamic
// shared memory and the buffers on it become checked pointers (every access
// goes through the race detector), the inline-PTX helpers give way to
// emu.h's models of the same instructions (and the single-instruction inline
// asm of import_source files to emu::ptx's), every synchronisation statement
// is wrapped so the mutation test can delete it, and the launch calls reach
// the emulator's. Every line keeps its number; #line directives make
// compiler messages and race reports name the .cu's lines.
// tests/emu/prepare.py is the same rewrite for the tests' own sources.
#pragma once

#include <string>

namespace tilet {

// One C++ source: `#include "emu.h"`, then the rewritten .cu (named `cuName`
// in #line directives) and the rewritten .host.cpp (`hostName`).
std::string emulatedSource(const std::string &cu, const std::string &host, const std::string &cuName, const std::string &hostName);

} // namespace tilet
