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

# `intentgate policy replay` (issue 19) on a database a real PDP filled:
# the same bundle changes nothing, one changed rule reports exactly its
# intents, --since/--until/--action, read-only, hostile rows. Both stores.
if(TARGET intentgate AND NOT IG_FUZZ)
  find_program(PYTHON3 python3 REQUIRED)
  ig_store_test(policy.replay
    ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_policy_replay.py)
  set_tests_properties(policy.replay PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
    LABELS integration TIMEOUT 600)
endif()

# One recorded decision's texts (binding, requirements, votes) into the
# intent a replay evaluates: what an edited database hands it.
if(TARGET igpdp AND IG_FUZZ)
  add_executable(fuzz_replay_row fuzz/fuzz_replay_row.c)
  target_link_libraries(fuzz_replay_row PRIVATE igpdp)
  target_link_options(fuzz_replay_row PRIVATE -fsanitize=fuzzer)
endif()

# bench_replay.sh's database: N recorded decisions written straight into a
# file the store created.
if(TARGET igstore AND IG_BENCH AND NOT IG_FUZZ)
  add_executable(bench_replay_gen bench/bench_replay_gen.c)
  target_link_libraries(bench_replay_gen PRIVATE igstore)
endif()

# The intent at an approval's quorum, built once for the PDP and a replay
# (pdp/pdp_approval_intent.h): both ways agree; hostile texts refused.
if(TARGET igpdp AND NOT IG_FUZZ)
  ig_test(pdp replay_row LIBS igpdp)
  set_tests_properties(pdp.replay_row PROPERTIES LABELS unit TIMEOUT 60)
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
