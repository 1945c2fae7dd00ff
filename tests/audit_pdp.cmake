# The audit log inside the PDP (included from tests/CMakeLists.txt): the
# store's Merkle tree and checkpoints (cmocka), the integration suite that
# drives the real `intentgate serve` through a whole intent lifecycle and
# the /v1/audit endpoints, the anchor suite, and the benchmark of the
# append path.
if(NOT IG_FUZZ)
  ig_test(pdp store_audit LIBS igpdp)
  ig_test(pdp store_anchor LIBS igpdp)
  ig_test(store store_log LIBS igstore)

  find_program(PYTHON3 python3 REQUIRED)
  ig_store_test(audit.pdp_integration
    ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_audit_pdp.py)
  set_tests_properties(audit.pdp_integration PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
    TIMEOUT 900)

  # The history anchored outside the database (the anchor file beside the
  # audit key, the check at open, `audit verify`'s unsigned status), in an
  # operator's layout under this build tree (and /var/lib or /srv).
  add_test(NAME audit.anchor
    COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_audit_anchor.py
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(audit.anchor PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
    TIMEOUT 900)
endif()

if(IG_BENCH AND NOT IG_FUZZ)
  # bench_audit_append times audit events through the real store write
  # path, and the tree's hashing alone (audit/ calls) beside it.
  add_executable(bench_audit_append bench/bench_audit_append.c)
  target_link_libraries(bench_audit_append PRIVATE igpdp)
endif()

# The PostgreSQL store's audit sequencer against a real server: the
# environment's IG_TEST_PG_URL (a cluster whose user may CREATE DATABASE;
# scripts/pg-cluster.sh) - without it the cases fail, they never skip.
if(NOT IG_FUZZ)
  ig_test(store store_pg_audit LIBS igstore)
  set_tests_properties(store.store_pg_audit PROPERTIES LABELS pg TIMEOUT 300)
endif()

# The witness client in the PDP (issue 18): [witness ID] sections, the
# add-checkpoint requests and 409 resends, cosignatures on
# /v1/audit/checkpoint, the witness metrics, and hostile witnesses (fakes on
# loopback, signing with openssl) that never stall a decision.
if(NOT IG_FUZZ)
  ig_test(pdp pdp_config_witness LIBS igpdp)
  set_tests_properties(pdp.pdp_config_witness PROPERTIES LABELS "unit;witness"
    TIMEOUT 60)
  find_program(PYTHON3 python3 REQUIRED)
  ig_store_test(witness.client
    ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_witness_client.py)
  set_tests_properties(witness.client PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
    LABELS "integration;witness" TIMEOUT 600)
endif()

# The witness client on PostgreSQL replicas (issue 18): only the sequencer
# submits, every replica serves the cosignatures, only the sequencer shows
# the witness metrics. Needs IG_TEST_PG_URL.
if(NOT IG_FUZZ)
  add_test(NAME witness.replicas
    COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_witness_replicas.py)
  set_tests_properties(witness.replicas PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;IG_TEST_STORE=postgresql"
    LABELS "pg;witness" TIMEOUT 300)
endif()
