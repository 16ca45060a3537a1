# After `ctest`, the reason each skipped test gave (CTest lists skipped tests without it): run by
# CTEST_CUSTOM_POST_TEST (CTestCustom.cmake in the build folder, written by the top CMakeLists.txt)
# as `awk -v dir=<build>/Testing/Temporary -f skip_reasons.awk`, over CTest's log of the run
# (LastTest.log.tmp while the post-test command runs, LastTest.log after). A skipping test prints
# a line "SKIP: why" (or "...: skipped: why") and exits 77; only lines of a test's output count.
BEGIN {
  log_file = dir "/LastTest.log.tmp"
  if ((getline line < log_file) < 0) log_file = dir "/LastTest.log"
  close(log_file)
  while ((getline line < log_file) > 0) {
    if (line ~ /^[0-9]+\/[0-9]+ Testing: /) {
      test = line
      sub(/^[0-9]+\/[0-9]+ Testing: /, "", test)
    } else if (line == "Output:") {
      inside = 1
    } else if (line == "<end of output>") {
      inside = 0
    } else if (inside && test != "" && match(line, /(^|: )(SKIP|skipped): /)) {
      reasons = reasons "  " test ": " substr(line, RSTART + RLENGTH) "\n"
      test = "" # one reason per test
    }
  }
  if (reasons != "") printf "Why the skipped tests skipped:\n%s", reasons
}
