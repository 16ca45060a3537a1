// The Catch2 main, compiled once into its own library (it takes ~15 s to compile).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
