# tests/witness.cmake - `intentgate witness` (witness/): the state machine
# and its SQLite state, the add-checkpoint request from body to answer,
# the config reader (cmocka), and the real binary over HTTP with
# checkpoints from a real PDP (tests/integration/test_witness.py).
if(NOT IG_FUZZ)
  ig_test(witness witness_state LIBS igwitness igauditmem
    SOURCES unit/audit_util.c)
  ig_test(witness witness_add LIBS igwitness igauditmem
    SOURCES unit/audit_util.c)
  ig_test(witness witness_config LIBS igwitness SOURCES unit/audit_util.c)

  find_program(PYTHON3 python3 REQUIRED)
  add_test(NAME witness.integration
    COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_witness.py
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(witness.integration PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;IG_TEST_STORE=sqlite"
    LABELS witness TIMEOUT 600)
endif()

if(IG_FUZZ)
  # The whole add-checkpoint path on a hostile body, against a state that
  # lives on between inputs. Seeds: tests/fuzz/corpus/witness_add/
  # (tests/fuzz/witness_add_seeds.py).
  add_executable(fuzz_witness_add fuzz/fuzz_witness_add.c)
  target_link_libraries(fuzz_witness_add PRIVATE igwitness)
  target_link_options(fuzz_witness_add PRIVATE -fsanitize=fuzzer)
endif()
