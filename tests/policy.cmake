# Policy engine tests (included from tests/CMakeLists.txt): the cmocka unit
# tests, the example bundle's own tests run through `intentgate policy
# test`, a negative CLI test (a failing case must exit 1), and the
# benchmark.
set(IG_POLICY_BUNDLE_DIR ${CMAKE_SOURCE_DIR}/policies/bundle)

if(TARGET igpolicy AND NOT IG_FUZZ)
  add_executable(test_policy
    unit/test_policy.c
    unit/test_policy_sandbox.c
    unit/test_policy_helpers.c
    unit/test_policy_net.c
    unit/test_policy_text.c
    unit/test_policy_bundle.c
    unit/policy_util.c
    unit/testutil.c)
  target_include_directories(test_policy PRIVATE unit)
  target_compile_definitions(test_policy PRIVATE
    IG_VECTORS_DIR="${IG_VECTORS_DIR}"
    IG_POLICY_BUNDLE_DIR="${IG_POLICY_BUNDLE_DIR}")
  target_link_libraries(test_policy PRIVATE igpolicy PkgConfig::CMOCKA)
  add_test(NAME policy.unit COMMAND test_policy)

  # `policy test --coverage`: the instrumenter and the differential tests.
  add_executable(test_policy_cover
    unit/test_policy_cover.c
    unit/policy_util.c
    unit/testutil.c)
  target_include_directories(test_policy_cover PRIVATE unit)
  target_compile_definitions(test_policy_cover PRIVATE
    IG_VECTORS_DIR="${IG_VECTORS_DIR}"
    IG_POLICY_BUNDLE_DIR="${IG_POLICY_BUNDLE_DIR}")
  target_link_libraries(test_policy_cover PRIVATE igpolicy PkgConfig::CMOCKA)
  add_test(NAME policy.cover COMMAND test_policy_cover)
  set_tests_properties(policy.cover PROPERTIES LABELS unit TIMEOUT 120)

  # The explain trace (pol_engine_eval_traced).
  add_executable(test_policy_trace unit/test_policy_trace.c
    unit/policy_util.c unit/testutil.c)
  target_include_directories(test_policy_trace PRIVATE unit)
  target_compile_definitions(test_policy_trace PRIVATE
    IG_VECTORS_DIR="${IG_VECTORS_DIR}"
    IG_POLICY_BUNDLE_DIR="${IG_POLICY_BUNDLE_DIR}")
  target_link_libraries(test_policy_trace PRIVATE igpolicy PkgConfig::CMOCKA)
  add_test(NAME policy.trace COMMAND test_policy_trace)
  set_tests_properties(policy.trace PROPERTIES LABELS unit TIMEOUT 120)

  if(TARGET intentgate)
    add_test(NAME policy.bundle
      COMMAND intentgate policy test ${IG_POLICY_BUNDLE_DIR})
    add_test(NAME policy.cli
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_policy_cli.sh
              $<TARGET_FILE:intentgate>)
    add_test(NAME policy.coverage
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_policy_coverage.sh
              $<TARGET_FILE:intentgate> ${IG_POLICY_BUNDLE_DIR})
    set_tests_properties(policy.coverage PROPERTIES LABELS integration
      TIMEOUT 120)
    # `policy eval`: the explain output for each example policy.
    add_test(NAME policy.eval
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_policy_eval.sh
              $<TARGET_FILE:intentgate> ${IG_POLICY_BUNDLE_DIR})
    set_tests_properties(policy.eval PROPERTIES LABELS integration
      TIMEOUT 120)
  endif()
endif()

if(TARGET igpolicy AND IG_BENCH AND NOT IG_FUZZ)
  add_executable(bench_policy bench/bench_policy.c)
  target_compile_definitions(bench_policy PRIVATE
    IG_POLICY_BUNDLE_DIR="${IG_POLICY_BUNDLE_DIR}")
  target_link_libraries(bench_policy PRIVATE igpolicy)
endif()

# The helpers that read an agent's strings (parse_url, ip_is_private, the
# text helpers), against naive oracles.
if(TARGET igpolicy AND IG_FUZZ)
  add_executable(fuzz_polhelpers fuzz/fuzz_polhelpers.c)
  target_link_libraries(fuzz_polhelpers PRIVATE igpolicy)
  target_link_options(fuzz_polhelpers PRIVATE -fsanitize=fuzzer)
endif()

# The coverage instrumenter on arbitrary bytes: lines kept, insertions
# only, and what compiled still compiles.
if(TARGET igpolicy AND IG_FUZZ)
  add_executable(fuzz_pol_cover fuzz/fuzz_pol_cover.c)
  target_link_libraries(fuzz_pol_cover PRIVATE igpolicy)
  target_link_options(fuzz_pol_cover PRIVATE -fsanitize=fuzzer)
endif()
