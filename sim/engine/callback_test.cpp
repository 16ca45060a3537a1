// The engine's callback type (callback.hpp): small captures inline, large ones on the heap, both
// moved and destroyed exactly once.
#include "sim/engine/callback.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <memory>

namespace xattn::sim::engine
{

TEST_CASE("callback: a small and a large capture each run, move and are destroyed exactly once")
{
  auto alive = std::make_shared<int>(0); // its use count: how many copies of the capture live
  int ran = 0;
  {
    Callback small = [alive, &ran] { ran += 1; };
    std::array<double, 32> big{}; // 256 bytes: past the inline room
    big[31] = 10;
    Callback large = [alive, big, &ran] { ran += static_cast<int>(big[31]); };
    CHECK(alive.use_count() == 3);
    Callback moved = std::move(small);
    CHECK(small == nullptr); // NOLINT(bugprone-use-after-move): a moved-from callback is empty
    CHECK(alive.use_count() == 3);
    moved();
    large();
    large = std::move(moved); // the large one's capture is destroyed, the small one's moves in
    CHECK(alive.use_count() == 2);
    large();
    CHECK(ran == 12);
    large = nullptr;
    CHECK(!large);
    CHECK(alive.use_count() == 1);
  }
  CHECK(alive.use_count() == 1);
}

} // namespace xattn::sim::engine
