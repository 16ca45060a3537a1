// The pools of prefilled KV (kv_pool.hpp), worked by hand: two instances of two chunks each.
#include "sim/engine/kv_pool.hpp"

#include <catch2/catch.hpp>

using xattn::sim::engine::KvPool;

TEST_CASE("kv pool: each instance keeps its own copies, least recent unpinned out, pinned ones over the bound")
{
  KvPool pool(2, 2);
  pool.place(0, 10);
  pool.place(1, 10); // instance 1 prefilled it too: two copies
  CHECK(pool.home(10, 1) == 1);
  CHECK(pool.home(10, 0) == 0);
  pool.place(0, 11);
  CHECK(pool.home(11, 1) == 0); // not on 1: the copy on 0
  CHECK(pool.home(12, 0) == -1);
  std::vector<int> homes;
  pool.for_each_home(10, [&](int i) { homes.push_back(i); });
  CHECK(homes == std::vector<int>{0, 1});

  pool.use(0, 10);   // 0's order: 10, 11
  pool.place(0, 12); // over two: 11 out, the least recent
  CHECK(pool.counts(0).evictions == 1);
  CHECK_FALSE(pool.holds(0, 11));
  CHECK(pool.home(11, 0) == -1);
  CHECK(pool.holds(0, 10));
  CHECK(pool.holds(1, 10)); // the other pool's copy stays

  pool.pin(10);
  pool.pin(12);
  pool.place(0, 13); // every other chunk in use: over the bound, counted
  CHECK(pool.counts(0).overflows == 1);
  CHECK(pool.counts(0).peak == 3);
  pool.unpin(12);
  pool.place(0, 14); // 12 and 13 are free now: the least recent two leave
  CHECK(pool.holds(0, 10));
  CHECK(pool.holds(0, 14));
  CHECK_FALSE(pool.holds(0, 12));
  CHECK_FALSE(pool.holds(0, 13));
  CHECK(pool.counts(0).evictions == 3);
}

TEST_CASE("kv pool: a bound of 0 is unbounded")
{
  KvPool pool(1, 0);
  for (std::uint64_t c = 0; c < 1000; ++c)
    pool.place(0, c);
  CHECK(pool.counts(0).evictions == 0);
  CHECK(pool.counts(0).peak == 1000);
}
