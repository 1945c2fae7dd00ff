# tests/witness_e2e.cmake - witness.e2e: the audit log witnessed end to end
# (issue 18):
# two real `intentgate witness serve`, a real PDP with [witness a] and
# [witness b], and `intentgate audit verify --witness` on the honest log
# and on a fork re-signed with the real audit key
# (tests/integration/test_witness_e2e.py). Included from
# tests/CMakeLists.txt.
if(NOT IG_FUZZ)
  find_program(PYTHON3 python3 REQUIRED)
  add_test(NAME witness.e2e
    COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_witness_e2e.py
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(witness.e2e PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;IG_TEST_STORE=sqlite"
    LABELS witness
    TIMEOUT 900)
  # The honest history on PostgreSQL (the fork edits a SQLite file): the
  # store's reader appends the cosignatures there too. Needs the cluster
  # at IG_TEST_PG_URL (fails without it).
  add_test(NAME witness.e2e.pg
    COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_witness_e2e.py
            WitnessE2E.test_honest WitnessE2E.test_witness_serves_what_it_cosigned
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(witness.e2e.pg PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;IG_TEST_STORE=postgresql"
    LABELS "pg;witness"
    TIMEOUT 900)
endif()

# `audit verify --witness --witness-quorum` on a real log with
# cosignatures the test writes itself (tests/integration/
# test_audit_verify_witness.py): quorum, forgeries, usage.
if(NOT IG_FUZZ)
  add_test(NAME witness.verify
    COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_audit_verify_witness.py)
  set_tests_properties(witness.verify PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
    LABELS witness
    TIMEOUT 600)
endif()
