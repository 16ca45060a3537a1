// Fault injection, for the tests: one fault at a time, injected into a real run of the release
// binary, so that each check that guards a run's answer is seen to catch what it is there for
// (docs/architecture.md, "Fault injection"). Every build has it; nothing happens unless the
// environment names a fault:
//
//   XATTN_FAULT=lost-answer xattn run ...      the first pass of the fault's site injects it
//   XATTN_FAULT=lost-answer@3 xattn run ...    the third pass does
//
// The variable is read once, when the command line starts (arm_fault_from_env); a name not in the
// list is bad input (exit 2). Forked simulation processes inherit the armed fault and each count
// their own passes. When the fault is injected, one line on stderr says so.
//
// Each injection site is one line: `if (XATTN_FAULT(kLostAnswer)) return;`. Unarmed, it costs a
// load of one global byte and a branch predicted not taken; the pass counting is out of line.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

// The faults: X(enumerator, name in XATTN_FAULT, what it breaks). One home: the enum, the names,
// the parser and the docs' table follow this list.
#define XATTN_FAULT_LIST(X)                                                                                            \
  X(kLostAnswer, "lost-answer", "a routed exchange's answer never arrives: its operation never completes")             \
  X(kTransferDoneTwice, "transfer-done-twice", "a finished transfer calls its done callback twice")                    \
  X(kEventInPast, "event-in-past", "an iteration schedules its end before the present (time goes backwards)")          \
  X(kCacheOverBudget, "cache-over-budget", "a requester's cache takes an entry without evicting to make room")         \
  X(kBytesLost, "bytes-lost", "a finished transfer reports half its payload arrived")                                  \
  X(kStepTooShort, "step-too-short", "an iteration drops its exchanges and moves after its bound is priced")           \
  X(kPrefillOverlap, "prefill-overlap",                                                                                \
    "from its pass on, every re-prefill starts at once, before its GPU's earlier work ends")

namespace xattn::core
{

enum class Fault : std::uint8_t {
  kNone = 0,
#define XATTN_FAULT_ENUM(e, name, what) e,
  XATTN_FAULT_LIST(XATTN_FAULT_ENUM)
#undef XATTN_FAULT_ENUM
};

struct FaultInfo {
  Fault fault;
  std::string_view name; ///< as XATTN_FAULT spells it
  std::string_view what; ///< what it breaks
};

/// Every fault, in list order.
std::span<const FaultInfo> faults();

/// Arms `f` at its site's `at`-th pass (1-based); Fault::kNone disarms. REQUIRES: at >= 1.
void arm_fault(Fault f, std::uint64_t at = 1);

/// Arms the fault named by XATTN_FAULT=NAME[@N] (unset or empty: none). Throws InputError
/// ("environment: error: XATTN_FAULT: ...") on a name not in the list or an N that is not a
/// positive integer.
void arm_fault_from_env();

/// The fault armed now (kNone: none).
Fault armed_fault();

namespace fault_detail
{
extern Fault g_armed;
/// Counts a pass of the armed fault's site; true on the chosen pass (and says so on stderr).
[[gnu::cold]] [[gnu::noinline]] bool pass();
} // namespace fault_detail

} // namespace xattn::core

/// True at the chosen pass of this site when fault `name` (an enumerator of core::Fault) is armed.
#define XATTN_FAULT(name)                                                                                              \
  (__builtin_expect(::xattn::core::fault_detail::g_armed == ::xattn::core::Fault::name, 0) &&                          \
   ::xattn::core::fault_detail::pass())
