# The audit log inside the PDP (included from tests/CMakeLists.txt): the
# store's Merkle tree and checkpoints (cmocka), the integration suite that
# drives the real `intentgate serve` through a whole intent lifecycle and
# the /v1/audit endpoints, the anchor suite, and the benchmark of the
# append path.
if(NOT IG_FUZZ)
  ig_test(pdp store_audit LIBS igpdp)
  ig_test(pdp store_anchor LIBS igpdp)

  find_program(PYTHON3 python3 REQUIRED)
  add_test(NAME audit.pdp_integration
    COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_audit_pdp.py)
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
  # path; bench_audit_append_notree is the same program over the same
  # store sources compiled without the tree (PDP_AUDIT_NO_TREE): the
  # difference is the tree's cost per leaf.
  add_executable(bench_audit_append bench/bench_audit_append.c)
  target_link_libraries(bench_audit_append PRIVATE igpdp)
  set(IG_STORE_SOURCES
    ${CMAKE_SOURCE_DIR}/store/store_schema.c
    ${CMAKE_SOURCE_DIR}/store/store_sqlite.c
    ${CMAKE_SOURCE_DIR}/store/store_ops.c
    ${CMAKE_SOURCE_DIR}/store/store_read.c
    ${CMAKE_SOURCE_DIR}/store/store_util.c
    ${CMAKE_SOURCE_DIR}/store/store_counter.c
    ${CMAKE_SOURCE_DIR}/store/store_checkpoint.c
    ${CMAKE_SOURCE_DIR}/store/store_approval.c
    ${CMAKE_SOURCE_DIR}/store/store_audit.c
    ${CMAKE_SOURCE_DIR}/store/store_audit_read.c
    ${CMAKE_SOURCE_DIR}/store/store_audit_check.c
    ${CMAKE_SOURCE_DIR}/store/store_anchor.c
    ${CMAKE_SOURCE_DIR}/store/store_anchor_open.c)
  add_executable(bench_audit_append_notree bench/bench_audit_append.c
    ${IG_STORE_SOURCES})
  target_compile_definitions(bench_audit_append_notree PRIVATE
    PDP_AUDIT_NO_TREE)
  target_include_directories(bench_audit_append_notree PRIVATE
    ${CMAKE_SOURCE_DIR}/store)
  target_link_libraries(bench_audit_append_notree PRIVATE igaudit igcore
    PkgConfig::SQLITE Threads::Threads)
endif()
