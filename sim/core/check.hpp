// Checks that stay on in every build, release included (as LevelDB's and Abseil's CHECK do): a
// broken precondition or internal invariant is a bug, and a release build that went on would
// give a wrong answer silently. A failed check throws core::InternalError (exit 3) naming the
// file, the line and the condition:
//
//   XATTN_CHECK(bytes > 0);                      // sim/engine/network.cpp:98: check failed: bytes > 0
//   XATTN_CHECK(src != dst, "a transfer moves bytes between two GPUs");
//
// The message arguments are evaluated only when the check fails, so they may build strings. A
// check that holds costs one well-predicted branch; its failure path is out of line.
//
// Use it for what the code itself guarantees (the REQUIRES: of a header, state that must hold).
// Bad input is an InputError, found when the input is read; a failed check on the simulation's
// answer that the docs list is an InvariantError (sim/engine/README.md, "Invariants").
#pragma once

#include <string_view>

namespace xattn::core
{

/// Throws InternalError("FILE:LINE: check failed: CONDITION[: MESSAGE]").
[[noreturn]] [[gnu::cold]] void check_failed(const char* file, int line, const char* condition,
                                             std::string_view message = {});

} // namespace xattn::core

#define XATTN_CHECK(cond, ...)                                                                                         \
  (__builtin_expect(static_cast<bool>(cond), 1)                                                                        \
       ? static_cast<void>(0)                                                                                          \
       : ::xattn::core::check_failed(__FILE__, __LINE__, #cond __VA_OPT__(, ) __VA_ARGS__))
