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

  if(TARGET intentgate)
    add_test(NAME policy.bundle
      COMMAND intentgate policy test ${IG_POLICY_BUNDLE_DIR})
    add_test(NAME policy.cli
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_policy_cli.sh
              $<TARGET_FILE:intentgate>)
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

# Issue 19's tools attacked (tests/integration/test_policy_tools_attack.py,
# both stores): a hostile shadow bundle cannot change, slow or count
# against a live decision; the agent never sees a trace or a shadow
# verdict; agent text escaped on terminals, pages and CSV; `policy replay`
# never writes and reports each hostile row (exit 3). tests/cli/
# test_policy_tools_attack.sh: coverage decides as plain `policy test`.
if(TARGET intentgate AND NOT IG_FUZZ)
  find_program(PYTHON3 python3 REQUIRED)
  ig_store_test(policy.tools_attack
    ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_policy_tools_attack.py)
  set_tests_properties(policy.tools_attack PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
    LABELS integration TIMEOUT 900)
  add_test(NAME policy.tools_attack_cli
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_policy_tools_attack.sh
            $<TARGET_FILE:intentgate>)
  set_tests_properties(policy.tools_attack_cli PROPERTIES
    LABELS integration TIMEOUT 300)
endif()
