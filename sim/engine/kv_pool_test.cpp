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

TEST_CASE("kv pool: evicted chunks go to their instance's host tier, least recent out, and come back from it")
{
  KvPool pool(2, 1, {2, 0}); // instance 0: a host tier of two chunks; instance 1: none
  pool.place(0, 10);
  pool.place(0, 11); // 10 down to 0's host tier
  CHECK(pool.in_host(0, 10));
  CHECK_FALSE(pool.in_host(1, 10));
  CHECK(pool.home(10, 0) == -1); // the pools do not hold it: only instance 0 can read it back
  pool.place(0, 12);             // 11 down: the tier holds 11, 10
  pool.place(0, 13);             // 12 down: 10, the least recent, falls out
  CHECK(pool.counts(0).host_evictions == 1);
  CHECK_FALSE(pool.in_host(0, 10));
  CHECK(pool.counts(0).host_peak == 2);
  pool.restore(0, 11); // back in the pool, 13 down to the tier in its place
  CHECK(pool.holds(0, 11));
  CHECK_FALSE(pool.in_host(0, 11));
  CHECK(pool.in_host(0, 13));
  CHECK(pool.in_host(0, 12));
  CHECK(pool.counts(0).host_reads == 1);
  std::vector<int> homes;
  pool.for_each_host_home(12, [&](int i) { homes.push_back(i); });
  CHECK(homes == std::vector<int>{0});
  homes.clear();
  pool.for_each_host_home(11, [&](int i) { homes.push_back(i); });
  CHECK(homes.empty());
  pool.place(1, 20);
  pool.place(1, 21); // no tier: 20 is gone
  CHECK_FALSE(pool.in_host(1, 20));
  CHECK(pool.counts(1).host_evictions == 0);
  CHECK(pool.host_capacity(0) == 2);
  CHECK(pool.host_capacity(1) == 0);
}
