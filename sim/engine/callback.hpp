// What the engine runs when something ends (an event's date, a transfer's last byte, a kernel): a
// move-only callable with room for a small capture inline, so that the millions of callbacks a
// replay makes do not each allocate. std::function keeps 16 bytes inline, and only for trivially
// copyable captures; a call's continuation holds a shared pointer to its iteration and a few
// numbers. A larger capture goes to the heap.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace xattn::sim::engine
{

class Callback
{
public:
  static constexpr std::size_t kInline = 64; ///< bytes of capture kept inline

  Callback() = default;
  Callback(std::nullptr_t) {} // NOLINT(google-explicit-constructor): `done = nullptr` clears it
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Callback> &&
                                              std::is_invocable_r_v<void, std::decay_t<F>&>>>
  Callback(F&& f) // NOLINT(google-explicit-constructor): a lambda converts, as to std::function
  {
    using D = std::decay_t<F>;
    if constexpr (sizeof(D) <= kInline && alignof(D) <= alignof(std::max_align_t) &&
                  std::is_nothrow_move_constructible_v<D>) {
      ::new (static_cast<void*>(buf_)) D(std::forward<F>(f));
      ops_ = &kInlineOps<D>;
    } else {
      ::new (static_cast<void*>(buf_)) D*(new D(std::forward<F>(f)));
      ops_ = &kHeapOps<D>;
    }
  }
  Callback(Callback&& o) noexcept { take(o); }
  Callback& operator=(Callback&& o) noexcept
  {
    if (this != &o) {
      reset();
      take(o);
    }
    return *this;
  }
  Callback& operator=(std::nullptr_t) noexcept
  {
    reset();
    return *this;
  }
  Callback(const Callback&) = delete;
  Callback& operator=(const Callback&) = delete;
  ~Callback() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }
  bool operator==(std::nullptr_t) const { return ops_ == nullptr; }
  /// REQUIRES: not empty.
  void operator()() { ops_->call(buf_); }

private:
  struct Ops {
    void (*call)(void*);
    void (*move)(void* to, void* from); ///< move-constructs at `to`, destroys `from`
    void (*destroy)(void*);
  };
  template <class D>
  static constexpr Ops kInlineOps{[](void* p) { (*static_cast<D*>(p))(); },
                                  [](void* to, void* from) {
                                    ::new (to) D(std::move(*static_cast<D*>(from)));
                                    static_cast<D*>(from)->~D();
                                  },
                                  [](void* p) { static_cast<D*>(p)->~D(); }};
  template <class D>
  static constexpr Ops kHeapOps{[](void* p) { (**static_cast<D**>(p))(); },
                                [](void* to, void* from) { ::new (to) D*(*static_cast<D**>(from)); },
                                [](void* p) { delete *static_cast<D**>(p); }};
  void take(Callback& o) noexcept
  {
    if (o.ops_ == nullptr) return;
    o.ops_->move(buf_, o.buf_);
    ops_ = std::exchange(o.ops_, nullptr);
  }
  void reset() noexcept
  {
    if (ops_ != nullptr) std::exchange(ops_, nullptr)->destroy(buf_);
  }

  alignas(std::max_align_t) unsigned char buf_[kInline];
  const Ops* ops_ = nullptr;
};

} // namespace xattn::sim::engine
